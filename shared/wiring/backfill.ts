/**
 * Composition root of the backfill function: configuration and endpoints from the environment, official
 * clients from {@link createClients}, the ledger bucket and the backfill queue as ports, and the Spanner and
 * BigQuery adapters from `spannerAndBigQuery` (tests may substitute in-memory ones).
 */
import { randomUUID } from 'node:crypto';
import { GcsObjectStore } from '../adapters/gcs/object-store';
import { CloudTasksQueue } from '../adapters/tasks/task-queue';
import type { BackfillDeps } from '../app/backfill';
import { type BackfillStarter, backfillStarter } from '../app/backfill';
import { EnrichmentCounters, Enrichments } from '../app/enrichment';
import { LedgerStore } from '../app/ledger';
import type { BackfillLineage } from '../app/lineage';
import { TableRegistry } from '../app/tables';
import { type PipelineConfig, parseConfig } from '../domain/config';
import { parseSealSettings } from '../domain/dead-letter-seal';
import { SluiceError } from '../domain/errors';
import { createLogger, type Logger } from '../domain/log';
import { fromEpochMillis } from '../domain/timestamp';
import type { DimensionReader } from '../ports/dimension-reader';
import type { ObjectStore } from '../ports/object-store';
import type { SpannerCatalog } from '../ports/spanner-catalog';
import { createAdapters } from './adapters';
import { type Clients, createClients } from './clients';
import { endpointsFromEnv } from './endpoints';
import { lineageFromEnv } from './lineage';
import { writerPrefixOf } from './settings';

/** The adapters over Spanner and BigQuery a backfill needs. */
export type SpannerAndBigQuery = (
  clients: Clients,
  config: BackfillDeps['config'] & Parameters<typeof createAdapters>[1],
  log: BackfillDeps['log'],
) => Pick<BackfillDeps, 'snapshots' | 'catalog' | 'replica' | 'history'>;

/** The production adapters. */
export const realAdapters: SpannerAndBigQuery = (clients, config, log) =>
  createAdapters(clients, config, log);

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

/** The backfill's dependencies over already built clients (shared with the scheduler's composition root). */
export function depsFromClients(
  env: Record<string, string | undefined>,
  config: PipelineConfig,
  clients: Clients,
  log: Logger,
  spannerAndBigQuery: SpannerAndBigQuery = realAdapters,
): BackfillDeps {
  const store = new GcsObjectStore(clients.storage.bucket(config.ledger.bucket));
  const queue = new CloudTasksQueue(clients.tasks, {
    queues: {
      backfill: required(env, 'SLUICE_BACKFILL_QUEUE'),
      reader: (env.SLUICE_READER_QUEUE ?? '').split(',').map((q) => q.trim()),
    },
    ...(env.SLUICE_TASKS_SERVICE_ACCOUNT ? { oidcServiceAccount: env.SLUICE_TASKS_SERVICE_ACCOUNT } : {}),
    dispatchDeadlineSeconds: 1800,
  });
  const base = required(env, 'SLUICE_BACKFILL_URL').replace(/\/$/, '');
  const adapters = spannerAndBigQuery(clients, config, log);
  return {
    config,
    store,
    queue,
    ...adapters,
    replay: replayPorts(adapters, new LedgerStore(store, config.pipeline, log), config, log, env),
    workerUrl: `${base}/backfills/tasks`,
    now: wallClock,
    newId: () => randomUUID().replaceAll('-', '').slice(0, 20),
    log,
    dataBoostDefault: env.SLUICE_DATA_BOOST === 'true',
    ...writerPrefixOf(env),
    ...sealKeyOf(env),
    enrichments: enrichmentsOf(adapters, store, config, log),
  };
}

/** The key the backfill's own dead letters are sealed with (oversized history rows, ADR-2114). */
function sealKeyOf(env: Record<string, string | undefined>): Pick<BackfillDeps, 'deadLetterKey'> {
  const { key } = parseSealSettings(env);
  return key ? { deadLetterKey: key } : {};
}

/** The lookups' enrichers, when the adapters give a dimension reader and a full catalog (the real ones do). */
function enrichmentsOf(
  adapters: ReturnType<SpannerAndBigQuery>,
  store: ObjectStore,
  config: PipelineConfig,
  log: Logger,
): Enrichments | undefined {
  const { dimensions, catalog } = adapters as {
    dimensions?: DimensionReader;
    catalog: Partial<SpannerCatalog>;
  };
  if (!dimensions || typeof catalog.readRowsAt !== 'function') return undefined;
  const enrichmentCounters = new EnrichmentCounters(store, config.pipeline, { log });
  return Enrichments.over({ dimensions, catalog: catalog as SpannerCatalog, enrichmentCounters });
}

/** Dead-letter replay's ports, when the adapters give a full catalog (the real ones do). */
function replayPorts(
  adapters: ReturnType<SpannerAndBigQuery>,
  ledger: LedgerStore,
  config: PipelineConfig,
  log: Logger,
  env: Record<string, string | undefined>,
): BackfillDeps['replay'] {
  const catalog = adapters.catalog as Partial<SpannerCatalog>;
  if (typeof catalog.readRowsAt !== 'function' || typeof catalog.streamOptions !== 'function')
    return undefined;
  const full = catalog as SpannerCatalog;
  const ports = { catalog: full, replica: adapters.replica, history: adapters.history, ledger };
  return { catalog: full, tables: new TableRegistry(ports, config, log), seal: parseSealSettings(env) };
}

/**
 * The scheduler's backfill starter (`startAt: "snapshot"`, `restart-and-backfill`), or undefined when the
 * environment names no backfill queue and URL — then those two settings fail with a message saying so.
 */
export function schedulerBackfills(
  env: Record<string, string | undefined>,
  config: PipelineConfig,
  clients: Clients,
  log: Logger,
  lineage?: BackfillLineage,
): BackfillStarter | undefined {
  if (!env.SLUICE_BACKFILL_QUEUE?.trim() || !env.SLUICE_BACKFILL_URL?.trim()) return undefined;
  return backfillStarter({ ...depsFromClients(env, config, clients, log), lineage });
}

/** Builds the backfill function's dependencies once per instance. */
export function backfillDeps(
  env: Record<string, string | undefined>,
  spannerAndBigQuery: SpannerAndBigQuery,
): { deps: BackfillDeps; clients: Clients } {
  const config = parseConfig(env);
  const clients = createClients(config, endpointsFromEnv(env));
  const write = (line: string) => process.stdout.write(`${line}\n`);
  const log = createLogger(write, { pipeline: config.pipeline }, 'INFO', config.logValues);
  const lineage = lineageFromEnv(env, config, log);
  const deps = {
    ...depsFromClients(env, config, clients, log, spannerAndBigQuery),
    lineage: lineage.backfill,
  };
  const close = async () => {
    await lineage.close();
    await clients.close();
  };
  return { deps, clients: { ...clients, close } };
}
