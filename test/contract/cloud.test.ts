/**
 * The object-store and task-queue contracts against Cloud Storage and Cloud Tasks (the local emulators,
 * through the official clients), plus the cases only a real client produces: a write whose answer was lost.
 */
process.env.METADATA_SERVER_DETECTION = 'none';
delete process.env.STORAGE_EMULATOR_HOST;

import { type GcsEmulator, startGcsEmulator } from '../../local/emulators/gcs/emulator';
import { startTasksEmulator, type TasksEmulator } from '../../local/emulators/tasks/emulator';
import { GcsObjectStore } from '../../shared/adapters/gcs/object-store';
import { CloudTasksQueue } from '../../shared/adapters/tasks/task-queue';
import { objectStoreContract } from './object-store.contract';
import { taskQueueContract } from './task-queue.contract';

let gcs: GcsEmulator;
let tasks: TasksEmulator;
let bucketCount = 0;
const queues = {
  reader: 'projects/p/locations/l/queues/readers',
  backfill: 'projects/p/locations/l/queues/backfills',
};
/** A reader queue in three shards (a pipeline past one queue's 5,000 concurrent dispatches). */
const shards = [1, 2, 3].map((i) => `projects/p/locations/l/queues/readers-shard-${i}`);

beforeAll(async () => {
  gcs = await startGcsEmulator({ port: 0 });
  tasks = await startTasksEmulator({ port: 0, queues: [queues.reader, queues.backfill, ...shards] });
  // Nothing listens on the targets: keep the queues paused so tasks stay queued.
  for (const q of [...Object.values(queues), ...shards]) await tasks.client().pauseQueue({ name: q });
});

afterAll(async () => {
  await tasks?.stop();
  await gcs?.stop();
});

const fastRetry = { retryOptions: { retryDelayMultiplier: 1.1, maxRetryDelay: 2 } };

function freshBucket() {
  const name = `ledger-${++bucketCount}`;
  gcs.admin.createBucket(name);
  return gcs.storage(fastRetry).bucket(name);
}

objectStoreContract('Cloud Storage emulator', async () => new GcsObjectStore(freshBucket()));
taskQueueContract(
  'Cloud Tasks emulator',
  async () => new CloudTasksQueue(tasks.client(), { queues, dispatchDeadlineSeconds: 60 }),
);

describe('GcsObjectStore with the official client', () => {
  it('recognises its own write when the answer was lost and the retry got 412', async () => {
    const store = new GcsObjectStore(freshBucket());
    // The first attempt takes effect but its answer is replaced by a 503; the client retries and gets 412.
    gcs.admin.fail({ method: 'objects.insert', times: 1, code: 503, afterItems: 1 });
    const outcome = await store.write('p/x', Buffer.from('{}'), { ifGeneration: 0, writerToken: 'w-1' });
    expect(outcome.ok).toBe(true);
    const other = await store.write('p/x', Buffer.from('{}'), { ifGeneration: 0, writerToken: 'w-2' });
    expect(other).toEqual({ ok: false, reason: 'conflict' });
  });

  it('rides through a 429 on a conditional write', async () => {
    const store = new GcsObjectStore(freshBucket());
    gcs.admin.fail({ method: 'objects.insert', times: 1, code: 429 });
    expect((await store.write('p/y', Buffer.from('1'), { ifGeneration: 0 })).ok).toBe(true);
  });
});

describe('CloudTasksQueue with the official client', () => {
  it('creates a named task with a JSON body and a schedule time', async () => {
    const queue = new CloudTasksQueue(tasks.client(), { queues, dispatchDeadlineSeconds: 60 });
    const notBeforeMs = Date.now() + 60_000;
    await queue.enqueue({
      queue: 'reader',
      id: 'win-1',
      url: 'http://127.0.0.1:9/read',
      body: { a: 1 },
      notBeforeMs,
    });
    const task = tasks.admin.task(`${queues.reader}/tasks/win-1`);
    expect(task?.url).toBe('http://127.0.0.1:9/read');
    expect(Math.abs((task?.scheduleTimeMs ?? 0) - notBeforeMs)).toBeLessThan(2);
  });

  it('spreads reader tasks over the shards by partition, each partition always to the same queue', async () => {
    const queue = new CloudTasksQueue(tasks.client(), {
      queues: { reader: shards, backfill: queues.backfill },
      dispatchDeadlineSeconds: 60,
    });
    const partitions = Array.from({ length: 60 }, (_, i) => i.toString(16).padStart(32, '0'));
    const task = (p: string, n: number) => ({
      queue: 'reader' as const,
      id: `e0-${p}-${n}`,
      url: 'http://127.0.0.1:9/read',
      body: { partition: p },
      shardKey: p,
    });
    for (const p of partitions) expect(await queue.enqueue(task(p, 1))).toBe('created');
    const where = new Map<string, string>();
    for (const q of shards) {
      const [listed] = await tasks.client().listTasks({ parent: q });
      for (const t of listed) where.set(String(t.name).split('/tasks/e0-')[1]!.split('-')[0]!, q);
    }
    expect(where.size).toBe(60);
    // Every shard takes a share.
    for (const q of shards) expect([...where.values()].filter((x) => x === q).length).toBeGreaterThan(5);
    // The next window of a partition, from another producer, lands beside it; a duplicate still collapses.
    for (const p of partitions.slice(0, 10)) {
      expect(await queue.enqueue(task(p, 2))).toBe('created');
      expect(await queue.enqueue(task(p, 2))).toBe('exists');
      expect(tasks.admin.task(`${where.get(p)}/tasks/e0-${p}-2`)).toBeDefined();
    }
  });
});
