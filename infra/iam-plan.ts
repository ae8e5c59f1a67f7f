/**
 * The complete list of IAM grants the deployment makes, as data: who gets which role on which single
 * resource. Nothing is granted on the project but the Data Lineage producer role (lineage events have no
 * narrower resource), and that only with lineage sent to the API; nothing to a public principal. `resources/access.ts`
 * turns each entry into one IAM member resource; `docs/deploy.md` explains each line.
 */
import type { FunctionName } from './deployment-schema';
import type { InfraSettings } from './settings';

/**
 * Identities created by the deployment, Pub/Sub's service agent of the project, and the operators and
 * writer invokers from the stack configuration.
 */
export type Principal =
  | FunctionName
  | 'tasksInvoker'
  | 'cronInvoker'
  | 'pushInvoker'
  | 'pubsubAgent'
  | { member: string };

/** The one resource a grant is on. */
export type GrantTarget =
  | { kind: 'ledgerBucket' }
  /** The ledger bucket, restricted by an IAM condition to objects under the writer's dead-letter prefix. */
  | { kind: 'deadLetters' }
  | { kind: 'database' }
  | { kind: 'dataset' }
  | { kind: 'queue'; queue: 'reader' | 'backfill' }
  | { kind: 'serviceAccount'; account: 'tasksInvoker' | 'pushInvoker' }
  | { kind: 'function'; fn: FunctionName }
  | { kind: 'topic'; topic: string }
  | { kind: 'subscription' }
  /** The secret holding the key stream dead letters are sealed with (ADR-2305). */
  | { kind: 'deadLetterKey' }
  /** The project itself: only for roles of APIs without narrower resources (Data Lineage). */
  | { kind: 'project' };

/** One grant, with the reason an operator reviewing it would ask for. */
export interface Grant {
  principal: Principal;
  role: string;
  target: GrantTarget;
  why: string;
}

/** The functions of the pipeline itself (the writer is apart: it writes Spanner and reads no ledger). */
type Runtime = Exclude<FunctionName, 'writer'>;
const RUNTIMES: readonly Runtime[] = ['scheduler', 'reader', 'backfill'];

/** Every grant, in a stable order. */
export function iamPlan(
  s: Pick<InfraSettings, 'dataBoost' | 'operators' | 'writer' | 'lineage' | 'project' | 'prefix'>,
): Grant[] {
  const grants: Grant[] = [];
  const add = (principal: Principal, role: string, target: GrantTarget, why: string) =>
    grants.push({ principal, role, target, why });
  const addEach = (role: string, rows: readonly (readonly [Principal, GrantTarget, string])[]) => {
    for (const [principal, target, why] of rows) add(principal, role, target, why);
  };
  for (const fn of RUNTIMES) {
    add(
      fn,
      'roles/storage.objectUser',
      { kind: 'ledgerBucket' },
      'reads and compare-and-swaps ledger objects',
    );
    add(fn, 'roles/spanner.databaseReader', { kind: 'database' }, spannerWhy[fn]);
    add(fn, 'roles/bigquery.dataEditor', { kind: 'dataset' }, bigqueryWhy[fn]);
  }
  // Only the writer of stream letters and their replayer hold the key: any other account with objectUser on
  // the ledger can create an object shaped as a letter, but not seal one (ADR-2305).
  addEach('roles/secretmanager.secretAccessor', [
    ['reader', { kind: 'deadLetterKey' }, 'seals the stream dead letters it writes'],
    ['backfill', { kind: 'deadLetterKey' }, 'checks the seal of each dead letter before replaying it'],
  ]);
  if (s.dataBoost) {
    add(
      'backfill',
      'roles/spanner.databaseReaderWithDataBoost',
      { kind: 'database' },
      'runs snapshot partitions on Data Boost',
    );
  }
  addEach('roles/cloudtasks.enqueuer', [
    ['scheduler', { kind: 'queue', queue: 'reader' }, 'enqueues windows of ready partitions'],
    ['reader', { kind: 'queue', queue: 'reader' }, 'chains the next window and ready children'],
    [
      'scheduler',
      { kind: 'queue', queue: 'backfill' },
      're-drives stalled backfill partitions; startAt: snapshot',
    ],
    ['backfill', { kind: 'queue', queue: 'backfill' }, 'enqueues one task per snapshot partition'],
  ]);
  for (const fn of RUNTIMES) {
    add(
      fn,
      'roles/iam.serviceAccountUser',
      { kind: 'serviceAccount', account: 'tasksInvoker' },
      'names the tasks invoker in the OIDC token of the tasks it creates',
    );
  }
  addEach('roles/run.invoker', [
    ['tasksInvoker', { kind: 'function', fn: 'reader' }, 'Cloud Tasks delivers reader windows'],
    ['tasksInvoker', { kind: 'function', fn: 'backfill' }, 'Cloud Tasks delivers backfill partitions'],
    ['cronInvoker', { kind: 'function', fn: 'scheduler' }, 'Cloud Scheduler ticks the scheduler'],
  ]);
  for (const member of s.operators) {
    add(
      { member },
      'roles/run.invoker',
      { kind: 'function', fn: 'backfill' },
      'operators start backfills and read the status',
    );
  }
  if (s.lineage.target === 'api') {
    // The reader emits no lineage: the scheduler reports the pipeline's runs, the backfill function its jobs'.
    addEach('roles/datalineage.producer', [
      ['scheduler', { kind: 'project' }, 'reports the pipeline run (OpenLineage)'],
      ['backfill', { kind: 'project' }, 'reports each backfill run (OpenLineage)'],
    ]);
  }
  return [...grants, ...writerGrants(s.writer, writerSpannerRole(s).name)];
}

/**
 * The Spanner permissions the writer needs and nothing more (ADR-2304): BatchWrite (`write`) on sessions it
 * creates, and the INFORMATION_SCHEMA reads of its table schemas (`select` in a read-only snapshot).
 * `roles/spanner.databaseUser` would add DDL (`updateDdl`), partitioned DML and read-write transactions: a
 * compromised writer could drop the change stream.
 */
export const WRITER_SPANNER_PERMISSIONS = [
  'spanner.databases.beginReadOnlyTransaction',
  'spanner.databases.select',
  'spanner.databases.write',
  'spanner.sessions.create',
  'spanner.sessions.delete',
  'spanner.sessions.get',
] as const;

/** The project's custom role holding {@link WRITER_SPANNER_PERMISSIONS}: its id and full name. */
export function writerSpannerRole(s: Pick<InfraSettings, 'project' | 'prefix'>): {
  id: string;
  name: string;
} {
  const id = `${s.prefix.replace(/-/g, '_')}_spanner_writer`;
  return { id, name: `projects/${s.project}/roles/${id}` };
}

/** The writer's grants: its own database and dead-letter access, who may call it, its push subscription. */
function writerGrants(w: InfraSettings['writer'], spannerRole: string): Grant[] {
  const grants: Grant[] = [
    {
      principal: 'writer',
      role: spannerRole,
      target: { kind: 'database' },
      why: 'writes mutations (BatchWrite) and reads INFORMATION_SCHEMA for the table schemas',
    },
    {
      principal: 'writer',
      role: 'roles/storage.objectCreator',
      target: { kind: 'deadLetters' },
      why: `creates dead-letter objects, under ${w.deadLetterPrefix} only`,
    },
  ];
  const invoke = (principal: Principal, why: string): Grant => ({
    principal,
    role: 'roles/run.invoker',
    target: { kind: 'function', fn: 'writer' },
    why,
  });
  for (const member of w.invokers) grants.push(invoke({ member }, 'producers post mutations'));
  if (!w.pubsub) return grants;
  grants.push(invoke('pushInvoker', 'the push subscription delivers messages'), {
    principal: 'pubsubAgent',
    role: 'roles/iam.serviceAccountTokenCreator',
    target: { kind: 'serviceAccount', account: 'pushInvoker' },
    why: "Pub/Sub mints the push subscription's OIDC tokens as the push invoker",
  });
  const dlt = w.pubsub.deadLetterTopic;
  if (dlt)
    grants.push(
      {
        principal: 'pubsubAgent',
        role: 'roles/pubsub.publisher',
        target: { kind: 'topic', topic: dlt },
        why: 'moves undeliverable messages to the dead-letter topic',
      },
      {
        principal: 'pubsubAgent',
        role: 'roles/pubsub.subscriber',
        target: { kind: 'subscription' },
        why: 'acknowledges the messages it moved to the dead-letter topic',
      },
    );
  return grants;
}

const spannerWhy: Record<Runtime, string> = {
  scheduler: 'validates the change stream (INFORMATION_SCHEMA, capture type, retention) before readers run',
  reader: 'queries the change stream and reads full rows at a commit timestamp',
  backfill: 'reads tables at a snapshot timestamp (batch read-only transaction)',
};

const bigqueryWhy: Record<Runtime, string> = {
  scheduler: 'writes the completeness table (watermark per source table)',
  reader: 'creates missing tables and writes replica and history rows',
  backfill: 'creates missing tables and writes snapshot rows',
};

/** Stable, readable key of a principal (for resource names and tests). */
export function principalKey(p: Principal): string {
  return typeof p === 'string' ? p : p.member;
}

/** Stable, readable key of a target (for resource names and tests). */
export function targetKey(t: GrantTarget): string {
  switch (t.kind) {
    case 'queue':
      return `queue:${t.queue}`;
    case 'serviceAccount':
      return `serviceAccount:${t.account}`;
    case 'function':
      return `function:${t.fn}`;
    case 'topic':
      return `topic:${t.topic.split('/').pop()}`;
    default:
      return t.kind;
  }
}
