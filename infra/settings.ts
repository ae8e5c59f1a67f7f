/**
 * `InfraSettings`: everything the resources need, built by one pure function from the Pulumi stack
 * configuration. The pipeline part (`sluice:pipeline`) is validated by the same schema the functions use
 * (through {@link readPipeline}); the deployment part by `deployment-schema.ts`. A bad stack configuration
 * fails `pulumi preview` with every bad field named.
 */

import { ConfigError } from '../shared/domain/config';
import { parseLineageSettings } from '../shared/domain/lineage/settings';
import { nearest } from '../shared/domain/suggest';
import { defaultWriterDeadLetterPrefix, ledgerOverlap } from '../shared/domain/writer/config';
import { type ConfigIssue, issuesAt, StackConfigError } from './config-error';
import {
  type DeploymentConfig,
  deploymentSchema,
  type FunctionName,
  STACK_KEYS,
  type WriterDeploymentConfig,
} from './deployment-schema';
import { type PipelineView, readPipeline } from './pipeline-adapter';
import {
  allSizings,
  backfillQueue,
  type FunctionSizing,
  type QueueSettings,
  readerQueue,
  TASK_DEADLINE_SECONDS,
  WINDOW_MARGIN_SECONDS,
  WRITER_DEADLINE_SECONDS,
} from './sizing';

/** The raw stack configuration, as read from Pulumi config (values not yet trusted). */
export interface StackConfigInput {
  /** `gcp:project`. */
  project: unknown;
  /** `gcp:region`. */
  region: unknown;
  /** `sluice:pipeline`: the pipeline configuration object, validated by the shared schema. */
  pipeline: unknown;
  /** Every other `sluice:*` key, by key name without the namespace. */
  deployment: Record<string, unknown>;
  /** `sluice:*` keys the program does not know (names without the namespace), refused. */
  unknownKeys?: readonly string[];
}

/** Names of the resources, fixed up front so that no resource's name depends on another's output. */
export interface ResourceNames {
  functions: Record<FunctionName, string>;
  /** Runtime service accounts, one per function (account ids). */
  accounts: Record<FunctionName, string>;
  /** Signs the OIDC tokens of Cloud Tasks (invokes reader and backfill). */
  tasksInvoker: string;
  /** Signs the OIDC token of the Cloud Scheduler job (invokes the scheduler only). */
  cronInvoker: string;
  /** Signs the OIDC token of the writer's Pub/Sub push subscription (invokes the writer only). */
  pushInvoker: string;
  queues: { reader: string; backfill: string };
  ledgerBucket: string;
  sourceBucket: string;
  /** Secret Manager secret holding the key stream dead letters are sealed with (ADR-2305). */
  deadLetterKey: string;
}

/** The writer function's deployment: who may call it, its push subscription, its own variables. */
export interface WriterSettings {
  invokers: string[];
  pubsub: WriterDeploymentConfig['pubsub'];
  /** Dead letters go to the ledger bucket under this prefix (the writer may create objects there only). */
  deadLetterPrefix: string;
  /** Variables only the writer function gets. */
  environment: Record<string, string>;
}

/** Everything the resource modules need. */
export interface InfraSettings {
  project: string;
  region: string;
  prefix: string;
  spanner: { instance: string; database: string; stream: string };
  dataset: { id: string; location: string; deleteContentsOnDestroy: boolean };
  ledger: {
    location: string;
    softDeleteDays: number;
    noncurrentDays: number;
    finishedJobsAgeDays: number;
    forceDestroy: boolean;
  };
  functions: Record<FunctionName, FunctionSizing>;
  queues: { reader: QueueSettings; backfill: QueueSettings };
  schedule: { cron: string; timeZone: string; attemptDeadlineSeconds: number };
  alerts: { lagSeconds: number; notificationChannels: string[] };
  dataBoost: boolean;
  demoDatabase: boolean;
  /** IAM members allowed to call the backfill API and the status route. */
  operators: string[];
  writer: WriterSettings;
  /** Lineage: `api` enables the Data Lineage API and lets the scheduler and backfill produce events. */
  lineage: { target: 'log' | 'api'; location: string; heartbeatSeconds: number };
  names: ResourceNames;
  /** Environment of every function: the pipeline configuration plus where the deployment put things. */
  environment: Record<string, string>;
}

/** Builds the settings, or throws {@link StackConfigError} listing every bad field. */
export function buildSettings(input: StackConfigInput): InfraSettings {
  const issues: ConfigIssue[] = unknownKeyIssues(input.unknownKeys ?? []);
  const project = requiredString(input.project, 'gcp:project', /^[a-z][a-z0-9-]{4,28}[a-z0-9]$/, issues);
  const region = requiredString(input.region, 'gcp:region', /^[a-z]+-[a-z]+[0-9]+$/, issues);
  const parsed = deploymentSchema.safeParse(input.deployment);
  if (!parsed.success) issues.push(...issuesAt('sluice', parsed.error.issues));
  const prefix = parsed.success ? parsed.data.prefix : 'sluice';
  const pipeline = readPipeline(
    input.pipeline,
    project ?? '',
    resourceNames(project ?? '', prefix).ledgerBucket,
  );
  if (!pipeline.ok) issues.push(...pipeline.issues);
  if (issues.length > 0 || !parsed.success || !pipeline.ok || !project || !region) {
    throw new StackConfigError(issues);
  }
  const settings = assemble(project, region, pipeline.view, parsed.data);
  const crossIssues = checkCrossFields(settings, pipeline.view);
  if (crossIssues.length > 0) throw new StackConfigError(crossIssues);
  return settings;
}

/** One issue per unknown `sluice:*` key, naming the known key it is closest to. */
function unknownKeyIssues(keys: readonly string[]): ConfigIssue[] {
  return keys.map((key) => {
    const near = nearest(key, STACK_KEYS);
    const hint = near
      ? `; did you mean sluice:${near}?`
      : `; known keys: ${STACK_KEYS.map((k) => `sluice:${k}`).join(', ')}`;
    return { path: `sluice:${key}`, message: `unknown key${hint}` };
  });
}

function requiredString(v: unknown, path: string, rule: RegExp, issues: ConfigIssue[]): string | undefined {
  if (typeof v === 'string' && rule.test(v)) return v;
  issues.push({ path, message: v === undefined ? 'required' : `must match ${rule.source}` });
  return undefined;
}

function assemble(project: string, region: string, view: PipelineView, d: DeploymentConfig): InfraSettings {
  const functions = allSizings(view, d);
  // The ledger bucket is part of the pipeline configuration (the functions read it from there).
  const names = { ...resourceNames(project, d.prefix), ledgerBucket: view.ledgerBucket };
  const settings: InfraSettings = {
    project,
    region,
    prefix: d.prefix,
    spanner: view.spanner,
    dataset: {
      id: view.dataset,
      location: d.dataset.location ?? region,
      deleteContentsOnDestroy: d.dataset.deleteContentsOnDestroy,
    },
    ledger: { ...d.ledger, location: d.ledger.location ?? region },
    functions,
    queues: {
      reader: readerQueue(functions.reader, d.queues.reader),
      backfill: backfillQueue(functions.backfill, d.dataBoost, d.queues.backfill),
    },
    // The job waits for the tick as long as the scheduler function may run (Scheduler caps at 30 min).
    schedule: { ...d.schedule, attemptDeadlineSeconds: functions.scheduler.timeoutSeconds },
    alerts: d.alerts,
    dataBoost: d.dataBoost,
    demoDatabase: d.demoDatabase,
    operators: d.operators,
    writer: writerSettings(d.writer, view),
    lineage: { ...d.lineage, location: d.lineage.location ?? region },
    names,
    environment: {},
  };
  settings.environment = { ...view.environment, ...deploymentEnvironment(settings) };
  return settings;
}

function writerSettings(w: WriterDeploymentConfig, view: PipelineView): WriterSettings {
  const pipeline = view.environment.SLUICE_PIPELINE ?? 'sluice';
  const deadLetterPrefix = w.deadLetterPrefix ?? defaultWriterDeadLetterPrefix(pipeline);
  // The writer's create-only grant covers this prefix: refused at preview if it reaches the ledger (ADR-2303).
  const overlap = ledgerOverlap(deadLetterPrefix, pipeline);
  if (overlap)
    throw new StackConfigError([
      { path: 'sluice:writer.deadLetterPrefix', message: `"${deadLetterPrefix}" ${overlap}` },
    ]);
  const optional: Array<[string, number | undefined]> = [
    ['SLUICE_WRITER_MAX_BATCH_CELLS', w.maxBatchCells],
    ['SLUICE_WRITER_MAX_BATCH_MUTATIONS', w.maxBatchMutations],
    ['SLUICE_WRITER_MAX_BATCH_BYTES', w.maxBatchBytes],
  ];
  return {
    invokers: w.invokers,
    pubsub: w.pubsub,
    deadLetterPrefix,
    environment: {
      SLUICE_WRITER_DEAD_LETTER_PREFIX: deadLetterPrefix,
      SLUICE_WRITER_CONSTRAINT_VIOLATION_POLICY: w.constraintViolationPolicy,
      SLUICE_WRITER_ORDERING: w.ordering,
      SLUICE_WRITER_REQUEST_DEADLINE_MS: String(WRITER_DEADLINE_SECONDS * 1000),
      ...Object.fromEntries(optional.filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)])),
    },
  };
}

/** Deterministic names: `<prefix>-<role>`; the buckets carry the project id because bucket names are global. */
export function resourceNames(project: string, prefix: string): ResourceNames {
  const per = (suffix: string) => `${prefix}-${suffix}`;
  return {
    functions: {
      scheduler: per('scheduler'),
      reader: per('reader'),
      backfill: per('backfill'),
      writer: per('writer'),
    },
    accounts: {
      scheduler: per('scheduler'),
      reader: per('reader'),
      backfill: per('backfill'),
      writer: per('writer'),
    },
    tasksInvoker: per('tasks'),
    pushInvoker: per('push'),
    cronInvoker: per('cron'),
    queues: { reader: per('reader'), backfill: per('backfill') },
    ledgerBucket: `${project}-${prefix}-ledger`,
    sourceBucket: `${project}-${prefix}-source`,
    deadLetterKey: per('dead-letter-key'),
  };
}

/** The reader queues' ids: the first keeps the one-queue name, the others add `-2`, `-3`, …. */
export function readerQueueIds(s: Pick<InfraSettings, 'names' | 'queues'>): string[] {
  const base = s.names.queues.reader;
  return Array.from({ length: s.queues.reader.shards }, (_, i) => (i === 0 ? base : `${base}-${i + 1}`));
}

/** Email of a service account created in the project. */
export function accountEmail(accountId: string, project: string): string {
  return `${accountId}@${project}.iam.gserviceaccount.com`;
}

/** Environment variables naming where the deployment put things (the function URLs are added later). */
export function deploymentEnvironment(s: InfraSettings): Record<string, string> {
  const queue = (id: string) => `projects/${s.project}/locations/${s.region}/queues/${id}`;
  return {
    GOOGLE_CLOUD_PROJECT: s.project,
    SLUICE_REGION: s.region,
    SLUICE_READER_QUEUE: readerQueueIds(s).map(queue).join(','),
    SLUICE_BACKFILL_QUEUE: queue(s.names.queues.backfill),
    SLUICE_TASKS_SERVICE_ACCOUNT: accountEmail(s.names.tasksInvoker, s.project),
    SLUICE_DATA_BOOST: String(s.dataBoost),
    SLUICE_LINEAGE: s.lineage.target,
    SLUICE_LINEAGE_LOCATION: s.lineage.location,
    SLUICE_LINEAGE_HEARTBEAT_MS: String(s.lineage.heartbeatSeconds * 1000),
    // Where the writer puts its dead letters: the status and the operator routes list them there (ADR-2203).
    SLUICE_WRITER_DEAD_LETTER_PREFIX: s.writer.deadLetterPrefix,
  };
}

/** The functions' own lineage rules, applied to what the deployment will give them. */
function lineageIssues(s: InfraSettings): ConfigIssue[] {
  const field: Record<string, string> = {
    SLUICE_LINEAGE: 'target',
    SLUICE_LINEAGE_LOCATION: 'location',
    SLUICE_LINEAGE_HEARTBEAT_MS: 'heartbeatSeconds',
  };
  try {
    parseLineageSettings(deploymentEnvironment(s));
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.issues.map((i) => ({ path: `sluice:lineage.${field[i.path] ?? i.path}`, message: i.rule }));
  }
}

/** The writer must outlive its request deadline, and Pub/Sub must wait for its answer. */
function writerIssues(s: InfraSettings): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const timeout = s.functions.writer.timeoutSeconds;
  if (timeout < WRITER_DEADLINE_SECONDS + 10)
    issues.push({
      path: 'sluice:functions.writer.timeoutSeconds',
      message: `must be at least ${WRITER_DEADLINE_SECONDS + 10} (the writer's ${WRITER_DEADLINE_SECONDS}s request deadline, which covers its worst-case retries, plus time to answer)`,
    });
  const p = s.writer.pubsub;
  if (p && p.ackDeadlineSeconds < timeout)
    issues.push({
      path: 'sluice:writer.pubsub.ackDeadlineSeconds',
      message: `must be at least the writer's timeout (${timeout}s): Pub/Sub would redeliver a message the writer is still writing`,
    });
  if (p && p.minBackoffSeconds > p.maxBackoffSeconds)
    issues.push({
      path: 'sluice:writer.pubsub.minBackoffSeconds',
      message: 'must not exceed maxBackoffSeconds',
    });
  return issues;
}

/** Rules that span fields: what zod cannot see one key at a time. */
function checkCrossFields(s: InfraSettings, view: PipelineView): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const needed = view.maxWindowSeconds + WINDOW_MARGIN_SECONDS;
  if (needed > TASK_DEADLINE_SECONDS) {
    issues.push({
      path: view.windowPath,
      message: `a window of ${view.maxWindowSeconds}s plus ${WINDOW_MARGIN_SECONDS}s to flush must finish inside Cloud Tasks' ${TASK_DEADLINE_SECONDS}s deadline`,
    });
  } else if (s.functions.reader.timeoutSeconds < needed) {
    issues.push({
      path: 'sluice:functions.reader.timeoutSeconds',
      message: `must be at least ${needed} (the longest window, ${view.maxWindowSeconds}s, plus ${WINDOW_MARGIN_SECONDS}s to flush)`,
    });
  }
  for (const [name, f] of Object.entries(s.functions)) {
    const at = `sluice:functions.${name}`;
    if (f.concurrency > 1 && f.cpu < 1) {
      issues.push({ path: `${at}.cpu`, message: 'concurrency above 1 needs at least 1 vCPU' });
    }
    if (f.minInstances > f.maxInstances) {
      issues.push({ path: `${at}.minInstances`, message: 'must not exceed maxInstances' });
    }
  }
  issues.push(...writerIssues(s), ...lineageIssues(s));
  for (const [name, q] of Object.entries(s.queues)) {
    if (q.minBackoffSeconds > q.maxBackoffSeconds) {
      issues.push({
        path: `sluice:queues.${name}.minBackoffSeconds`,
        message: 'must not exceed maxBackoffSeconds',
      });
    }
  }
  return issues;
}
