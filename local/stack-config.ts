/**
 * Names, function environment and the `sluice local ready {json}` line of the local stack. The functions
 * get exactly what a deployment gives them (the configuration variables and the variables the Pulumi
 * program adds) plus the endpoint overrides that point every client at an emulator.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Dialect } from '../shared/domain/change-record';
import type { DemoSchema } from './demo-schema';
import { tablesConfig } from './demo-schema';

/** Fixed names of the local deployment. */
export const LOCAL = {
  projectId: 'sluice-local',
  region: 'local',
  instance: 'local',
  database: 'demo',
  dataset: 'sluice_demo',
  bucket: 'sluice-local-ledger',
  pipeline: 'sluice',
  tasksServiceAccount: 'sluice-tasks@sluice-local.iam.gserviceaccount.com',
} as const;

/** Full name of one of the two queues. */
export function queueName(role: 'reader' | 'backfill'): string {
  return `projects/${LOCAL.projectId}/locations/${LOCAL.region}/queues/sluice-${role}`;
}

/** Full name of the demo database. */
export function databaseName(): string {
  return `projects/${LOCAL.projectId}/instances/${LOCAL.instance}/databases/${LOCAL.database}`;
}

/** Where everything listens, as the functions need it. */
export interface StackEndpoints {
  spannerHost: string;
  gcsUrl: string;
  tasksHost: string;
  bigqueryRestUrl: string;
  bigqueryWriteHost: string;
  lineageHost: string;
  readerUrl: string;
  backfillUrl: string;
}

/**
 * The environment of every function process. Short windows, flushes and leases so a laptop run shows
 * changes within seconds and recovers from a killed reader quickly; `overrides` win.
 */
export function functionEnvironment(
  schema: DemoSchema,
  mode: 'scheduled' | 'continuous',
  e: StackEndpoints,
  overrides: Record<string, string> = {},
): Record<string, string> {
  return {
    METADATA_SERVER_DETECTION: 'none',
    GOOGLE_CLOUD_PROJECT: LOCAL.projectId,
    SLUICE_PROJECT: LOCAL.projectId,
    SLUICE_PIPELINE: LOCAL.pipeline,
    SLUICE_SPANNER_INSTANCE: LOCAL.instance,
    SLUICE_SPANNER_DATABASE: LOCAL.database,
    SLUICE_SPANNER_STREAM: schema.stream,
    SLUICE_BIGQUERY_DATASET: LOCAL.dataset,
    SLUICE_LEDGER_BUCKET: LOCAL.bucket,
    SLUICE_TABLES: JSON.stringify(tablesConfig(schema)),
    SLUICE_MODE: mode,
    SLUICE_WINDOW_MAX_MS: '5000',
    SLUICE_WINDOW_LONG_POLL_MS: '3000',
    SLUICE_FLUSH_INTERVAL_MS: '200',
    SLUICE_CHECKPOINT_INTERVAL_MS: '1000',
    SLUICE_HEARTBEAT_MS: '1000',
    SLUICE_LEASE_MS: '10000',
    // Scheduled mode waits this long after catching up; seconds on a laptop, not the production 30 s.
    SLUICE_IDLE_DELAY_MS: '1000',
    // Quiet partitions back off to this and checkpoint at most this often (production: 300 s and 600 s).
    SLUICE_IDLE_MAX_DELAY_MS: '3000',
    SLUICE_QUIET_CHECKPOINT_MS: '2000',
    SLUICE_REGION: LOCAL.region,
    SLUICE_READER_QUEUE: queueName('reader'),
    SLUICE_BACKFILL_QUEUE: queueName('backfill'),
    SLUICE_TASKS_SERVICE_ACCOUNT: LOCAL.tasksServiceAccount,
    // Callers on loopback without a token (the CLI, the console, tests) are trusted; a token is still
    // checked against its route (ADR-2306). Deployed functions take the default, cloud-run.
    SLUICE_CALLER_IDENTITY: 'trust-loopback',
    SLUICE_READER_URL: e.readerUrl,
    SLUICE_BACKFILL_URL: e.backfillUrl,
    SLUICE_DATA_BOOST: 'false',
    SPANNER_EMULATOR_HOST: e.spannerHost,
    SLUICE_GCS_ENDPOINT: e.gcsUrl,
    SLUICE_TASKS_ENDPOINT: e.tasksHost,
    SLUICE_BIGQUERY_REST_ENDPOINT: e.bigqueryRestUrl,
    SLUICE_BIGQUERY_WRITE_ENDPOINT: e.bigqueryWriteHost,
    // Lineage goes to the local Data Lineage API emulator, with a heartbeat a laptop run shows.
    SLUICE_LINEAGE: 'api',
    SLUICE_LINEAGE_LOCATION: LOCAL.region,
    SLUICE_LINEAGE_ENDPOINT: e.lineageHost,
    SLUICE_LINEAGE_HEARTBEAT_MS: '10000',
    ...overrides,
  };
}

/**
 * The key the local reader seals its dead letters with (ADR-2305): generated, and kept beside the emulators'
 * state under `dataDir` so letters of an earlier run still replay.
 */
export function localDeadLetterKey(dataDir: string | undefined): string {
  if (!dataDir) return randomBytes(32).toString('base64');
  const file = join(dataDir, 'dead-letter-key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString('base64');
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}

/** Admin HTTP endpoints of the emulators (fault injection, churn, inspection: docs/emulators.md). */
export interface AdminUrls {
  spanner: string;
  gcs: string;
  tasks: string;
  bigquery: string;
  lineage: string;
}

/** The JSON of the `sluice local ready` line (documented in docs/local.md). */
export interface ReadyInfo {
  spanner: {
    emulatorHost: string;
    adminUrl: string;
    projectId: string;
    instance: string;
    database: string;
    dialect: Dialect;
  };
  bigquery: {
    restEndpoint: string;
    writeEndpoint: string;
    adminUrl: string;
    projectId: string;
    dataset: string;
  };
  gcs: { endpoint: string; adminUrl: string; bucket: string };
  tasks: { endpoint: string; adminUrl: string };
  lineage: { endpoint: string; adminUrl: string; location: string };
  functions: {
    scheduler: string | null;
    reader: string | null;
    backfill: string | null;
    writer: string | null;
  };
  /** The operator console (`GET /` of the backfill function), null without functions. */
  console: string | null;
  tables: Array<{ source: string; replica: string | null; history: string | null }>;
  /** Where the functions' log lines are written (set by `npm start`). */
  logFile?: string;
}

/** Builds the ready info from the endpoints. */
export function readyInfo(
  schema: DemoSchema,
  e: StackEndpoints,
  admin: AdminUrls,
  functions: ReadyInfo['functions'],
): ReadyInfo {
  return {
    spanner: {
      emulatorHost: e.spannerHost,
      adminUrl: admin.spanner,
      projectId: LOCAL.projectId,
      instance: LOCAL.instance,
      database: LOCAL.database,
      dialect: schema.dialect,
    },
    bigquery: {
      restEndpoint: e.bigqueryRestUrl,
      writeEndpoint: e.bigqueryWriteHost,
      adminUrl: admin.bigquery,
      projectId: LOCAL.projectId,
      dataset: LOCAL.dataset,
    },
    gcs: { endpoint: e.gcsUrl, adminUrl: admin.gcs, bucket: LOCAL.bucket },
    tasks: { endpoint: e.tasksHost, adminUrl: admin.tasks },
    lineage: { endpoint: e.lineageHost, adminUrl: admin.lineage, location: LOCAL.region },
    functions,
    console: functions.backfill ? `${functions.backfill}/` : null,
    tables: schema.tables.map((t) => ({ source: t.name, replica: t.replica, history: t.history })),
  };
}

/** The one line scripts wait for. */
export function readyLine(info: ReadyInfo): string {
  return `sluice local ready ${JSON.stringify(info)}`;
}
