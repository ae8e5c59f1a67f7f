/**
 * Composition root of the writer function: its configuration from the environment, the official Spanner and
 * Storage clients, and the writer over the Spanner adapters and the dead-letter bucket. The writer reads the
 * schema when it is built (the first request of an instance); a failed start is not kept, so the next
 * request tries again.
 */
import { Spanner } from '@google-cloud/spanner';
import { Storage } from '@google-cloud/storage';
import { GcsObjectStore } from '../adapters/gcs/object-store';
import { SpannerMutationSink } from '../adapters/spanner/mutation-sink';
import { SpannerWriterCatalog } from '../adapters/spanner/writer-catalog';
import { MutationWriter } from '../app/writer';
import { createLogger, type Logger } from '../domain/log';
import { parseWriterConfig, type WriterConfig } from '../domain/writer/config';
import { endpointsFromEnv } from './endpoints';

/** A built writer and how to close its clients. */
export interface WriterInstance {
  writer: MutationWriter;
  config: WriterConfig;
  log: Logger;
  close(): Promise<void>;
}

/**
 * Builds and starts the writer from the environment; log lines go to stdout (tests may collect them).
 * @throws ConfigError naming every bad variable.
 */
export async function createWriterFromEnv(
  env: Record<string, string | undefined>,
  logSink: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<WriterInstance> {
  const config = parseWriterConfig(env);
  const log = createLogger(logSink, { pipeline: config.pipeline }, 'INFO', config.logValues);
  // Unknown variables are warned about once, at instance start (`checkInstance` in ./startup).
  const spanner = new Spanner({ projectId: config.project });
  const database = spanner.instance(config.instance).database(config.database);
  const gcs = endpointsFromEnv(env).gcs;
  const storage = new Storage({
    projectId: config.project,
    ...(gcs ? { apiEndpoint: gcs } : {}),
    retryOptions: { maxRetries: 5, retryDelayMultiplier: 2, maxRetryDelay: 16 },
  });
  const writer = new MutationWriter({
    config,
    sink: new SpannerMutationSink(database),
    catalog: new SpannerWriterCatalog(database),
    deadLetters: new GcsObjectStore(storage.bucket(config.deadLetters.bucket)),
    log,
  });
  const close = async () => {
    await database.close();
    spanner.close();
  };
  try {
    await writer.start();
  } catch (err) {
    await close();
    throw err;
  }
  return { writer, config, log, close };
}

let instance: Promise<WriterInstance> | undefined;

/** The writer of this function instance, built on first use from `process.env`. */
export function writerOfInstance(): Promise<WriterInstance> {
  instance ??= createWriterFromEnv(process.env);
  instance.catch(() => {
    instance = undefined;
  });
  return instance;
}
