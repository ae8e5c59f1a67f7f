/**
 * The composition root: from the environment, once per function instance, the configuration (an invalid one is
 * a clear startup error naming every bad variable), the official clients, the adapters, and the application
 * services — the scheduler and the reader — sharing one ledger.
 */
import { GcsObjectStore } from '../adapters/gcs/object-store';
import { CloudTasksQueue } from '../adapters/tasks/task-queue';
import type { BackfillStarter } from '../app/backfill';
import type { AppSettings, Runtime } from '../app/common';
import { EnrichmentCounters } from '../app/enrichment';
import { DeadLetterStore, LedgerStore } from '../app/ledger';
import { Reader } from '../app/replication/reader';
import { Scheduler } from '../app/replication/scheduler';
import { ConfigError, type PipelineConfig, parseConfig } from '../domain/config';
import { parseSealSettings } from '../domain/dead-letter-seal';
import { parseLineageSettings } from '../domain/lineage/settings';
import { createLogger, type Logger } from '../domain/log';
import type { LogValues } from '../domain/log-values';
import { fromEpochMillis } from '../domain/timestamp';
import type { ObjectStore } from '../ports/object-store';
import type { TaskQueue } from '../ports/task-queue';
import { schedulerBackfills } from './backfill';
import { createClients } from './clients';
import { endpointsFromEnv } from './endpoints';
import { lineageFromEnv } from './lineage';
import { pipelineAdapters, type SourceAndSinks, type SourceAndSinksFactory } from './pipeline-adapters';
import { type DeploymentSettings, parseDeploymentSettings } from './settings';

/** Every port the application services use. */
export interface PipelinePorts extends SourceAndSinks {
  store: ObjectStore;
  queue: TaskQueue;
  /** `startAt: "snapshot"` and `restart-and-backfill` start backfills through it. */
  backfills?: BackfillStarter | undefined;
}

/** The services of one function instance. */
export interface App {
  settings: AppSettings;
  ledger: LedgerStore;
  scheduler: Scheduler;
  reader: Reader;
  log: Logger;
  close(): Promise<void>;
}

/** Assembles the services over any ports (real, in-memory, or emulator-backed). */
export function assembleApp(
  ports: PipelinePorts,
  settings: AppSettings,
  runtime: Runtime,
  close = async () => {},
): App {
  const ledger = new LedgerStore(ports.store, settings.config.pipeline, runtime.log);
  const deadLetters = new DeadLetterStore(ports.store, settings.config.pipeline, {
    sealKey: settings.deadLetterKey,
    writerPrefix: settings.writerDeadLetterPrefix,
  });
  const enrichmentCounters = new EnrichmentCounters(ports.store, settings.config.pipeline, {
    log: runtime.log,
  });
  const all = { ...ports, ledger, deadLetters, enrichmentCounters };
  return {
    settings,
    ledger,
    scheduler: new Scheduler(all, settings, runtime),
    reader: new Reader(all, settings, runtime),
    log: runtime.log,
    close,
  };
}

/** Parses both the pipeline configuration and the deployment settings, reporting every problem at once. */
export function parseEnvironment(env: Record<string, string | undefined>): {
  config: PipelineConfig;
  deployment: DeploymentSettings;
} {
  const issues = [];
  let config: PipelineConfig | undefined;
  let deployment: DeploymentSettings | undefined;
  try {
    config = parseConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    issues.push(...err.issues);
  }
  try {
    deployment = parseDeploymentSettings(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    issues.push(...err.issues);
  }
  try {
    parseLineageSettings(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    issues.push(...err.issues);
  }
  if (!config || !deployment || issues.length > 0) throw new ConfigError(issues);
  return { config, deployment };
}

/** Logger writing Cloud Logging JSON lines to stdout, quoting row values as `values` allows. */
export function stdoutLogger(pipeline?: string, values?: LogValues): Logger {
  const write = (line: string) => process.stdout.write(`${line}\n`);
  return createLogger(write, pipeline ? { pipeline } : {}, 'INFO', values);
}

/** Builds the app from the environment with the real adapters. @throws ConfigError naming every bad variable. */
export function createAppFromEnv(
  env: Record<string, string | undefined>,
  factory: SourceAndSinksFactory = pipelineAdapters,
): App {
  const { config, deployment } = parseEnvironment(env);
  // Unknown variables are warned about once, at instance start (`checkInstance` in ./startup).
  const log = stdoutLogger(config.pipeline, config.logValues);
  const clients = createClients(config, endpointsFromEnv(env));
  const store = new GcsObjectStore(clients.storage.bucket(config.ledger.bucket));
  const queue = new CloudTasksQueue(clients.tasks, {
    queues: {
      reader: deployment.readerQueues,
      backfill: deployment.backfillQueue ?? deployment.readerQueues[0]!,
    },
    ...(deployment.tasksServiceAccount ? { oidcServiceAccount: deployment.tasksServiceAccount } : {}),
    dispatchDeadlineSeconds: deployment.dispatchDeadlineSeconds,
  });
  const settings: AppSettings = {
    config,
    readerUrl: deployment.readerUrl,
    retentionMarginMs: deployment.retentionMarginMs,
    idleDelayMs: deployment.idleDelayMs,
    idleMaxDelayMs: deployment.idleMaxDelayMs,
    quietCheckpointMs: deployment.quietCheckpointMs,
    requestDeadlineMs: requestDeadlineMs(deployment.dispatchDeadlineSeconds),
    ...(deployment.writerDeadLetterPrefix
      ? { writerDeadLetterPrefix: deployment.writerDeadLetterPrefix }
      : {}),
  };
  // Only the reader's instances are given the key (ADR-2305); the scheduler's settings simply lack it.
  const { key } = parseSealSettings(env);
  if (key) settings.deadLetterKey = key;
  const runtime: Runtime = { now: () => fromEpochMillis(Date.now()), log };
  const lineage = lineageFromEnv(env, config, log);
  const backfills = schedulerBackfills(env, config, clients, log, lineage.backfill);
  const adapters = factory(clients, config, deployment, log);
  const ports = { store, queue, backfills, ...adapters, lineage: lineage.pipeline(adapters.catalog) };
  return assembleApp(ports, settings, runtime, async () => {
    await lineage.close();
    await clients.close();
  });
}

/**
 * A reader request's own deadline from the tasks' dispatch deadline: 90 % of it, and at least 10 s before it,
 * so the last flush and the ledger write finish before Cloud Tasks gives up (ADR-1505).
 */
export function requestDeadlineMs(dispatchDeadlineSeconds: number): number {
  const ms = dispatchDeadlineSeconds * 1000;
  return Math.max(1_000, Math.min(ms * 0.9, ms - 10_000));
}

let instance: App | undefined;

/** The app of this function instance, built on first use from `process.env`. */
export function appOfInstance(): App {
  instance ??= createAppFromEnv(process.env);
  return instance;
}
