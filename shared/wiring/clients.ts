/**
 * The composition root's first step: official Google clients built from the configuration and the
 * environment. In production every endpoint is the default; locally the emulator variables point them at
 * loopback (`SPANNER_EMULATOR_HOST` is read by the Spanner client itself).
 */
import { BigQuery } from '@google-cloud/bigquery';
import { managedwriter } from '@google-cloud/bigquery-storage';
import type { Database } from '@google-cloud/spanner';
import { Spanner } from '@google-cloud/spanner';
import { Storage } from '@google-cloud/storage';
import { CloudTasksClient } from '@google-cloud/tasks';
import { credentials } from '@grpc/grpc-js';
import type { PipelineConfig } from '../domain/config';
import type { Endpoints } from './endpoints';

/** The clients one function instance shares across requests. */
export interface Clients {
  spanner: Spanner;
  database: Database;
  storage: Storage;
  tasks: CloudTasksClient;
  bigquery: BigQuery;
  writer: managedwriter.WriterClient;
  close(): Promise<void>;
}

function hostPort(value: string): { apiEndpoint: string; port: number } {
  const m = /^(?:[a-z]+:\/\/)?([^:/]+):(\d+)\/?$/.exec(value);
  if (!m) throw new Error(`invalid endpoint ${JSON.stringify(value)}: expected host:port`);
  return { apiEndpoint: m[1]!, port: Number(m[2]) };
}

/** Builds every client once; gRPC channels are insecure only when an endpoint override is given. */
export function createClients(config: PipelineConfig, endpoints: Endpoints): Clients {
  const projectId = config.project;
  const spanner = new Spanner({ projectId });
  const database = spanner.instance(config.spanner.instance).database(config.spanner.database);
  const storage = new Storage({
    projectId,
    ...(endpoints.gcs ? { apiEndpoint: endpoints.gcs } : {}),
    retryOptions: { maxRetries: 5, retryDelayMultiplier: 2, maxRetryDelay: 16 },
  });
  const tasks = endpoints.tasks
    ? new CloudTasksClient({ ...hostPort(endpoints.tasks), sslCreds: credentials.createInsecure() })
    : new CloudTasksClient();
  const bigquery = new BigQuery({
    projectId,
    ...(endpoints.bigqueryRest ? { apiEndpoint: endpoints.bigqueryRest } : {}),
  });
  const writer = endpoints.bigqueryWrite
    ? new managedwriter.WriterClient({
        projectId,
        ...hostPort(endpoints.bigqueryWrite),
        sslCreds: credentials.createInsecure(),
      })
    : new managedwriter.WriterClient({ projectId });
  return {
    spanner,
    database,
    storage,
    tasks,
    bigquery,
    writer,
    close: async () => {
      writer.close();
      await tasks.close();
      await database.close();
      spanner.close();
    },
  };
}
