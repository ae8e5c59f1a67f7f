/**
 * Composition root of the backfill function: configuration and endpoints from the environment, official
 * clients from {@link createClients}, the ledger bucket and the backfill queue as ports. The Spanner snapshot
 * source and catalog and the BigQuery sinks are supplied by `spannerAndBigQuery` — their adapters live
 * beside the others in `shared/adapters/` and are plugged in here once available.
 */
import { randomUUID } from 'node:crypto';
import { GcsObjectStore } from '../adapters/gcs/object-store';
import { CloudTasksQueue } from '../adapters/tasks/task-queue';
import type { BackfillDeps } from '../app/backfill/deps';
import { parseConfig } from '../domain/config';
import { SluiceError } from '../domain/errors';
import { createLogger } from '../domain/log';
import { fromEpochMillis } from '../domain/timestamp';
import { type Clients, createClients, endpointsFromEnv } from './clients';

/** The adapters over Spanner and BigQuery a backfill needs. */
export type SpannerAndBigQuery = (
  clients: Clients,
) => Pick<BackfillDeps, 'snapshots' | 'catalog' | 'replica' | 'history'>;

/** Environment variables the backfill function reads besides the configuration ones. */
export const BACKFILL_VARIABLES = [
  'SLUICE_BACKFILL_QUEUE',
  'SLUICE_READER_QUEUE',
  'SLUICE_BACKFILL_URL',
  'SLUICE_TASKS_SERVICE_ACCOUNT',
  'SLUICE_DATA_BOOST',
] as const;

function required(env: Record<string, string | undefined>, name: string): string {
  const value = env[name]?.trim();
  if (!value) throw new SluiceError('permanent', `${name} is not set`);
  return value;
}

/** A monotone-enough wall clock in nanoseconds (milliseconds are all `Date` gives; fine for job times). */
const wallClock = () => fromEpochMillis(Date.now());

/** Builds the backfill function's dependencies once per instance. */
export function backfillDeps(
  env: Record<string, string | undefined>,
  spannerAndBigQuery: SpannerAndBigQuery,
): { deps: BackfillDeps; clients: Clients } {
  const config = parseConfig(env);
  const clients = createClients(config, endpointsFromEnv(env));
  const store = new GcsObjectStore(clients.storage.bucket(config.ledger.bucket));
  const queue = new CloudTasksQueue(clients.tasks, {
    queues: { backfill: required(env, 'SLUICE_BACKFILL_QUEUE'), reader: env.SLUICE_READER_QUEUE ?? '' },
    ...(env.SLUICE_TASKS_SERVICE_ACCOUNT ? { oidcServiceAccount: env.SLUICE_TASKS_SERVICE_ACCOUNT } : {}),
    dispatchDeadlineSeconds: 1800,
  });
  const base = required(env, 'SLUICE_BACKFILL_URL').replace(/\/$/, '');
  const deps: BackfillDeps = {
    config,
    store,
    queue,
    ...spannerAndBigQuery(clients),
    workerUrl: `${base}/backfills/tasks`,
    now: wallClock,
    newId: () => randomUUID().replaceAll('-', '').slice(0, 20),
    log: createLogger((line) => process.stdout.write(`${line}\n`), { pipeline: config.pipeline }),
    dataBoostDefault: env.SLUICE_DATA_BOOST === 'true',
  };
  return { deps, clients };
}

/** Stand-in until the Spanner and BigQuery adapters are wired: every use says what is missing. */
export const adaptersNotWired: SpannerAndBigQuery = () => {
  throw new SluiceError(
    'permanent',
    'the backfill function is not wired to Spanner and BigQuery yet (SpannerSnapshotSource, SpannerCatalogReader, BigQuery sinks)',
  );
};
