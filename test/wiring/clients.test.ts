/** The composition root reaches every local emulator through the official clients, from configuration alone. */
process.env.METADATA_SERVER_DETECTION = 'none';
delete process.env.STORAGE_EMULATOR_HOST;

import { type BigQueryEmulator, startBigQueryEmulator } from '../../local/emulators/bigquery/emulator';
import { type GcsEmulator, startGcsEmulator } from '../../local/emulators/gcs/emulator';
import { type RunningSpannerEmulator, startSpannerEmulator } from '../../local/emulators/spanner/server';
import { startTasksEmulator, type TasksEmulator } from '../../local/emulators/tasks/emulator';
import { parseConfig } from '../../shared/domain/config';
import { type Clients, createClients } from '../../shared/wiring/clients';
import { endpointsFromEnv } from '../../shared/wiring/endpoints';

let gcs: GcsEmulator;
let tasks: TasksEmulator;
let bq: BigQueryEmulator;
let spanner: RunningSpannerEmulator;
let clients: Clients;
const queue = 'projects/local-project/locations/local/queues/readers';

beforeAll(async () => {
  [gcs, tasks, bq, spanner] = await Promise.all([
    startGcsEmulator({ port: 0, buckets: ['ledger'] }),
    startTasksEmulator({ port: 0, queues: [queue] }),
    startBigQueryEmulator({ grpcPort: 0, restPort: 0, projectId: 'local-project' }),
    startSpannerEmulator({ port: 0 }),
  ]);
  spanner.admin.createDatabase('projects/local-project/instances/inst/databases/db', 'GOOGLE_STANDARD_SQL');
  process.env.SPANNER_EMULATOR_HOST = spanner.address;
  const env = {
    SLUICE_PROJECT: 'local-project',
    SLUICE_SPANNER_INSTANCE: 'inst',
    SLUICE_SPANNER_DATABASE: 'db',
    SLUICE_SPANNER_STREAM: 'S',
    SLUICE_BIGQUERY_DATASET: 'ds',
    SLUICE_LEDGER_BUCKET: 'ledger',
    SLUICE_TABLES: '{"T":{"replica":"t"}}',
    SLUICE_GCS_ENDPOINT: gcs.url,
    SLUICE_TASKS_ENDPOINT: tasks.address,
    SLUICE_BIGQUERY_REST_ENDPOINT: bq.restUrl,
    SLUICE_BIGQUERY_WRITE_ENDPOINT: bq.grpcAddress,
  };
  clients = createClients(parseConfig(env), endpointsFromEnv(env));
}, 30_000);

afterAll(async () => {
  await clients?.close();
  delete process.env.SPANNER_EMULATOR_HOST;
  await Promise.all([gcs?.stop(), tasks?.stop(), bq?.stop(), spanner?.stop()]);
});

it('reaches Spanner, Cloud Storage, Cloud Tasks, BigQuery and the Storage Write API', async () => {
  const [rows] = await clients.database.run({ sql: 'SELECT 1 AS one', json: true });
  expect(rows).toEqual([{ one: 1 }]);
  await clients.storage
    .bucket('ledger')
    .file('x')
    .save('{}', { resumable: false, preconditionOpts: { ifGenerationMatch: 0 } });
  expect(gcs.admin.read('ledger', 'x')?.toString()).toBe('{}');
  const [q] = await clients.tasks.getQueue({ name: queue });
  expect(q.name).toBe(queue);
  await clients.bigquery.createDataset('ds');
  const [table] = await clients.bigquery
    .dataset('ds')
    .createTable('t', { schema: [{ name: 'id', type: 'INT64' }] });
  const streamId = await clients.writer.createWriteStream({
    streamType: 'COMMITTED',
    destinationTable: 'projects/local-project/datasets/ds/tables/t',
  });
  expect(streamId).toContain('tables/t/streams/');
  expect(table.id).toBe('t');
});
