/** Turns the IAM plan into one IAM member resource per grant, each on a single resource. */
import * as gcp from '@pulumi/gcp';
import * as pulumi from '@pulumi/pulumi';
import {
  type Grant,
  type GrantTarget,
  iamPlan,
  type Principal,
  principalKey,
  targetKey,
  WRITER_SPANNER_PERMISSIONS,
  writerSpannerRole,
} from '../iam-plan';
import type { InfraSettings } from '../settings';
import type { Accounts } from './accounts';
import type { Functions } from './functions';
import type { Queues } from './queues';

/** The resources grants are made on. */
export interface GrantTargets {
  ledger: gcp.storage.Bucket;
  dataset: gcp.bigquery.Dataset;
  queues: Queues;
  functions: Functions;
  /** Present when the deployment created the (demo) database itself. */
  database?: gcp.spanner.Database;
  /** The writer's push subscription, when configured. */
  subscription?: gcp.pubsub.Subscription;
  /** The project number (names Pub/Sub's service agent). */
  projectNumber: pulumi.Output<string>;
}

/** Creates every grant of {@link iamPlan}. */
export function grantAccess(
  s: InfraSettings,
  accounts: Accounts,
  targets: GrantTargets,
): pulumi.CustomResource[] {
  // A role definition, not a grant: the writer's Spanner permissions (ADR-2304).
  const role = writerSpannerRole(s);
  const writerRole = new gcp.projects.IAMCustomRole('writer-spanner-role', {
    project: s.project,
    roleId: role.id,
    title: `${s.prefix} writer: BatchWrite and schema reads`,
    permissions: [...WRITER_SPANNER_PERMISSIONS],
  });
  return iamPlan(s)
    .filter((g) => g.target.kind !== 'deadLetterKey')
    .flatMap((g) =>
      g.target.kind === 'queue' && g.target.queue === 'reader'
        ? queueGrants(s, g, accounts, targets)
        : [grant(s, g, accounts, targets, g.role === role.name ? writerRole : undefined)],
    );
}

/** A grant on the reader queue, made on every shard of it (the first under the one-queue name). */
function queueGrants(
  s: InfraSettings,
  g: Grant,
  accounts: Accounts,
  t: GrantTargets,
): pulumi.CustomResource[] {
  const common = { role: g.role, member: memberOf(g.principal, accounts, t) };
  return t.queues.reader.map(
    (q, i) =>
      new gcp.cloudtasks.QueueIamMember(i === 0 ? logicalName(g) : `${logicalName(g)}-${i + 1}`, {
        ...common,
        project: s.project,
        location: s.region,
        name: q.name,
      }),
  );
}

/**
 * The grants on the dead-letter key (ADR-2305), made apart and first: a function reads its secret
 * environment variables when its revision is deployed, so the grants must exist before the functions.
 */
export function grantKeyAccess(
  s: InfraSettings,
  accounts: Accounts,
  key: gcp.secretmanager.Secret,
): pulumi.CustomResource[] {
  return iamPlan(s)
    .filter((g) => g.target.kind === 'deadLetterKey')
    .map(
      (g) =>
        new gcp.secretmanager.SecretIamMember(logicalName(g), {
          role: g.role,
          member: pulumi.interpolate`serviceAccount:${accountOf(runtimeOf(g.principal), accounts).email}`,
          project: s.project,
          secretId: key.secretId,
        }),
    );
}

function runtimeOf(p: Principal): 'reader' | 'backfill' {
  if (p !== 'reader' && p !== 'backfill')
    throw new Error(`only the reader and backfill hold the dead-letter key`);
  return p;
}

function accountOf(p: Exclude<Principal, 'pubsubAgent' | { member: string }>, accounts: Accounts) {
  if (p === 'tasksInvoker' || p === 'cronInvoker') return accounts[p];
  if (p === 'pushInvoker') {
    if (!accounts.pushInvoker)
      throw new Error('a grant names the push invoker, but no push subscription is configured');
    return accounts.pushInvoker;
  }
  return accounts.runtime[p];
}

function memberOf(p: Principal, accounts: Accounts, t: GrantTargets): pulumi.Input<string> {
  if (typeof p !== 'string') return p.member;
  if (p === 'pubsubAgent')
    return pulumi.interpolate`serviceAccount:service-${t.projectNumber}@gcp-sa-pubsub.iam.gserviceaccount.com`;
  return pulumi.interpolate`serviceAccount:${accountOf(p, accounts).email}`;
}

/** Logical name of a grant: readable in a preview, unique per (principal, role, target). */
function logicalName(g: Grant): string {
  const who = principalKey(g.principal).replace(/[^A-Za-z0-9]+/g, '-');
  const role = g.role.replace(/^roles\//, '').replace(/[./]/g, '-');
  return `${who}-${role}-${targetKey(g.target).replace(/:/g, '-')}`;
}

function grant(
  s: InfraSettings,
  g: Grant,
  accounts: Accounts,
  t: GrantTargets,
  role?: gcp.projects.IAMCustomRole,
): pulumi.CustomResource {
  const name = logicalName(g);
  const common = { role: g.role, member: memberOf(g.principal, accounts, t) };
  const target: GrantTarget = g.target;
  switch (target.kind) {
    case 'ledgerBucket':
      return new gcp.storage.BucketIAMMember(name, { ...common, bucket: t.ledger.name });
    case 'deadLetters':
      return new gcp.storage.BucketIAMMember(name, {
        ...common,
        bucket: t.ledger.name,
        condition: {
          title: 'writer dead letters only',
          description: `objects under ${s.writer.deadLetterPrefix}`,
          expression: pulumi.interpolate`resource.name.startsWith("projects/_/buckets/${t.ledger.name}/objects/${s.writer.deadLetterPrefix}")`,
        },
      });
    case 'topic':
      return new gcp.pubsub.TopicIAMMember(name, {
        ...common,
        project: target.topic.split('/')[1],
        topic: target.topic,
      });
    case 'subscription':
      if (!t.subscription) throw new Error('a grant names the push subscription, but none is configured');
      return new gcp.pubsub.SubscriptionIAMMember(name, { ...common, subscription: t.subscription.name });
    case 'database':
      return new gcp.spanner.DatabaseIAMMember(
        name,
        {
          ...common,
          project: s.project,
          instance: s.spanner.instance,
          database: t.database ? t.database.name : s.spanner.database,
        },
        role ? { dependsOn: [role] } : {},
      );
    case 'dataset':
      return new gcp.bigquery.DatasetIamMember(name, {
        ...common,
        project: s.project,
        datasetId: t.dataset.datasetId,
      });
    case 'queue':
      return new gcp.cloudtasks.QueueIamMember(name, {
        ...common,
        project: s.project,
        location: s.region,
        name: target.queue === 'reader' ? t.queues.reader[0]!.name : t.queues.backfill.name,
      });
    case 'serviceAccount':
      return new gcp.serviceaccount.IAMMember(name, {
        ...common,
        serviceAccountId: accountOf(target.account, accounts).name,
      });
    case 'project':
      return new gcp.projects.IAMMember(name, { ...common, project: s.project });
    case 'deadLetterKey':
      throw new Error('grants on the dead-letter key are made by grantKeyAccess, before the functions');
    case 'function':
      // Gen2 functions are invoked through their Cloud Run service (same name): run.invoker there.
      return new gcp.cloudrunv2.ServiceIamMember(name, {
        ...common,
        project: s.project,
        location: s.region,
        name: t.functions.byName[target.fn].name,
      });
  }
}
