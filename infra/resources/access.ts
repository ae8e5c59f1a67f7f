/** Turns the IAM plan into one IAM member resource per grant, each on a single resource. */
import * as gcp from '@pulumi/gcp';
import * as pulumi from '@pulumi/pulumi';
import { type Grant, type GrantTarget, iamPlan, type Principal, principalKey, targetKey } from '../iam-plan';
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
}

/** Creates every grant of {@link iamPlan}. */
export function grantAccess(
  s: InfraSettings,
  accounts: Accounts,
  targets: GrantTargets,
): pulumi.CustomResource[] {
  return iamPlan(s).map((g) => grant(s, g, accounts, targets));
}

function memberOf(p: Principal, accounts: Accounts): pulumi.Input<string> {
  if (typeof p !== 'string') return p.member;
  const account = p === 'tasksInvoker' || p === 'cronInvoker' ? accounts[p] : accounts.runtime[p];
  return pulumi.interpolate`serviceAccount:${account.email}`;
}

/** Logical name of a grant: readable in a preview, unique per (principal, role, target). */
function logicalName(g: Grant): string {
  const who = principalKey(g.principal).replace(/[^A-Za-z0-9]+/g, '-');
  const role = g.role.replace(/^roles\//, '').replace(/\./g, '-');
  return `${who}-${role}-${targetKey(g.target).replace(/:/g, '-')}`;
}

function grant(s: InfraSettings, g: Grant, accounts: Accounts, t: GrantTargets): pulumi.CustomResource {
  const name = logicalName(g);
  const common = { role: g.role, member: memberOf(g.principal, accounts) };
  const target: GrantTarget = g.target;
  switch (target.kind) {
    case 'ledgerBucket':
      return new gcp.storage.BucketIAMMember(name, { ...common, bucket: t.ledger.name });
    case 'database':
      return new gcp.spanner.DatabaseIAMMember(name, {
        ...common,
        project: s.project,
        instance: s.spanner.instance,
        database: t.database ? t.database.name : s.spanner.database,
      });
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
        name: t.queues[target.queue].name,
      });
    case 'serviceAccount':
      return new gcp.serviceaccount.IAMMember(name, {
        ...common,
        serviceAccountId: accounts[target.account].name,
      });
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
