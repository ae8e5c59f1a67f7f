/**
 * The backfill function end to end on loopback: job objects in the Cloud Storage emulator, partition tasks
 * on the Cloud Tasks emulator dispatching over HTTP to the function's worker route, through the official
 * clients. Spanner and BigQuery are in-memory here (their adapters are wired separately); a crash
 * mid-partition is retried by the queue to the same end state.
 */
process.env.METADATA_SERVER_DETECTION = 'none';
delete process.env.STORAGE_EMULATOR_HOST;

import { type GcsEmulator, startGcsEmulator } from '../../local/emulators/gcs/emulator';
import { startTasksEmulator, type TasksEmulator } from '../../local/emulators/tasks/emulator';
import { GcsObjectStore } from '../../shared/adapters/gcs/object-store';
import { CloudTasksQueue } from '../../shared/adapters/tasks/task-queue';
import { harness, seedOrders } from '../app/backfill/support';
import { type BackfillServer, serveBackfill } from './support/backfill-server';

const queues = {
  reader: 'projects/p/locations/l/queues/readers',
  backfill: 'projects/p/locations/l/queues/backfills',
};
let gcs: GcsEmulator;
let tasks: TasksEmulator;
let server: BackfillServer | undefined;
let url = '';
const h = harness();

beforeAll(async () => {
  gcs = await startGcsEmulator({ port: 0 });
  tasks = await startTasksEmulator({
    port: 0,
    queues: [
      queues.reader,
      {
        name: queues.backfill,
        retryConfig: { minBackoff: { nanos: 50_000_000 }, maxBackoff: { nanos: 100_000_000 } },
      },
    ],
  });
  gcs.admin.createBucket('ledger');
  h.deps.store = new GcsObjectStore(gcs.storage().bucket('ledger'));
  h.deps.queue = new CloudTasksQueue(tasks.client(), { queues, dispatchDeadlineSeconds: 60 });
  server = await serveBackfill(h.deps);
  url = server.url;
  h.deps.workerUrl = `${url}/backfills/tasks`;
});

afterAll(async () => {
  await server?.close();
  await tasks?.stop();
  await gcs?.stop();
});

it('runs a backfill through the queue, retrying a crashed partition, and reports progress', async () => {
  seedOrders(h, 20);
  h.snapshots.failReads(3, Object.assign(new Error('14 UNAVAILABLE: reset'), { code: 14 }));
  const bad = await fetch(`${url}/backfills`, {
    method: 'POST',
    body: '{"tables":["Nope"]}',
    headers: { 'content-type': 'application/json' },
  });
  expect(bad.status).toBe(400);
  const posted = await fetch(`${url}/backfills`, {
    method: 'POST',
    body: JSON.stringify({ tables: ['Orders'] }),
    headers: { 'content-type': 'application/json' },
  });
  expect(posted.status).toBe(202);
  const { id, partitions } = (await posted.json()) as { id: string; partitions: number };
  await tasks.admin.idle(15_000);
  const records = tasks.admin.tasks(queues.backfill);
  expect(records).toHaveLength(partitions);
  expect(records.some((t) => t.dispatchCount > 1)).toBe(true);
  const view = (await (await fetch(`${url}/backfills/${id}`)).json()) as Record<string, unknown>;
  expect(view).toMatchObject({
    state: 'succeeded',
    partitions: { done: partitions, total: partitions },
    rowsWritten: 20,
  });
  expect(h.replica.rows('orders')).toHaveLength(20);
  // Some attempts failed and were retried: the history still holds each snapshot row once.
  expect(h.history.rows).toHaveLength(20);
  expect(new Set(h.history.rows.map((r) => r.change_id)).size).toBe(20);
});
