/**
 * Queue and task management through the unmodified `@google-cloud/tasks` client: queue CRUD and config,
 * named-task de-duplication with tombstones, size and deadline limits, paging, faults on gRPC calls.
 */
process.env['METADATA_SERVER_DETECTION'] = 'none';

import type { CloudTasksClient } from '@google-cloud/tasks';
import { startTasksEmulator, type TasksEmulator } from '../../../local/emulators/tasks/emulator';
import { rejection } from '../common/rejection';

let emulator: TasksEmulator;
let client: CloudTasksClient;
const location = 'projects/demo/locations/us-central1';
// Nothing listens on this port: tasks created here stay queued because their queues are paused.
const url = 'http://127.0.0.1:9/never';

beforeAll(async () => {
  emulator = await startTasksEmulator({ port: 0, tombstoneMs: 300 });
  client = emulator.client();
});
afterAll(() => emulator.stop());

/** The gRPC code a client call fails with (fails the test when the call succeeds). */
async function grpcCode(p: Promise<unknown>): Promise<number | undefined> {
  return (await rejection<{ code?: number }>(p)).code;
}

async function pausedQueue(id: string): Promise<string> {
  const name = `${location}/queues/${id}`;
  await client.createQueue({ parent: location, queue: { name } });
  await client.pauseQueue({ name });
  return name;
}

describe('queues', () => {
  test('create with limits and retry config; get, list, update, pause, resume, delete', async () => {
    const name = `${location}/queues/q-crud`;
    const [created] = await client.createQueue({
      parent: location,
      queue: {
        name,
        rateLimits: { maxDispatchesPerSecond: 5, maxConcurrentDispatches: 2 },
        retryConfig: {
          maxAttempts: 4,
          minBackoff: { seconds: 1 },
          maxBackoff: { seconds: 8 },
          maxDoublings: 2,
        },
      },
    });
    expect(created.rateLimits).toMatchObject({
      maxDispatchesPerSecond: 5,
      maxConcurrentDispatches: 2,
      maxBurstSize: 5,
    });
    expect(created.retryConfig?.maxAttempts).toBe(4);
    expect(created.state).toBe('RUNNING');
    expect(await grpcCode(client.createQueue({ parent: location, queue: { name } }))).toBe(6);
    const [got] = await client.getQueue({ name });
    expect(String(got.retryConfig?.maxBackoff?.seconds)).toBe('8');
    const [updated] = await client.updateQueue({
      queue: { name, rateLimits: { maxDispatchesPerSecond: 50 } },
      updateMask: { paths: ['rate_limits.max_dispatches_per_second'] },
    });
    expect(updated.rateLimits?.maxDispatchesPerSecond).toBe(50);
    expect(updated.rateLimits?.maxConcurrentDispatches).toBe(2);
    expect((await client.pauseQueue({ name }))[0].state).toBe('PAUSED');
    expect((await client.resumeQueue({ name }))[0].state).toBe('RUNNING');
    const [queues] = await client.listQueues({ parent: location });
    expect(queues.map((q) => q.name)).toContain(name);
    await client.deleteQueue({ name });
    expect(await grpcCode(client.getQueue({ name }))).toBe(5);
  });

  test('defaults match production', async () => {
    const [q] = await client.createQueue({
      parent: location,
      queue: { name: `${location}/queues/q-defaults` },
    });
    expect(q.rateLimits).toMatchObject({
      maxDispatchesPerSecond: 500,
      maxBurstSize: 100,
      maxConcurrentDispatches: 1000,
    });
    expect(q.retryConfig?.maxAttempts).toBe(100);
    expect(q.retryConfig?.maxDoublings).toBe(16);
    expect(q.retryConfig?.minBackoff?.nanos).toBe(100_000_000);
  });

  test('malformed names are INVALID_ARGUMENT', async () => {
    expect(await grpcCode(client.createQueue({ parent: location, queue: { name: 'q' } }))).toBe(3);
  });
});

describe('tasks', () => {
  test('a named task is created once; its name stays reserved after deletion, then frees up', async () => {
    const parent = await pausedQueue('q-dedup');
    const name = client.taskPath('demo', 'us-central1', 'q-dedup', 'partition-abc-window-1');
    const task = { name, httpRequest: { url, body: Buffer.from('{}') } };
    const [created] = await client.createTask({ parent, task });
    expect(created.name).toBe(name);
    expect(await grpcCode(client.createTask({ parent, task }))).toBe(6);
    await client.deleteTask({ name });
    expect(await grpcCode(client.getTask({ name }))).toBe(5);
    expect(await grpcCode(client.createTask({ parent, task }))).toBe(6);
    expect(emulator.admin.reservedNames()).toContain(name);
    await emulator.admin.waitFor(() => !emulator.admin.reservedNames().includes(name), 2000);
    await client.createTask({ parent, task });
  });

  test('unnamed tasks get generated ids; get, list with paging, views', async () => {
    const parent = await pausedQueue('q-list');
    for (let i = 0; i < 5; i++) {
      await client.createTask({ parent, task: { httpRequest: { url, body: Buffer.from(`body-${i}`) } } });
    }
    const [page, next] = await client.listTasks({ parent, pageSize: 2 }, { autoPaginate: false });
    expect(page).toHaveLength(2);
    expect(next?.pageToken).toBeTruthy();
    const [all] = await client.listTasks({ parent });
    expect(all).toHaveLength(5);
    const first = all[0];
    expect(first?.name).toMatch(/\/tasks\/\d{19}$/);
    expect(first?.httpRequest?.body ?? Buffer.alloc(0)).toHaveLength(0);
    const [full] = await client.getTask({ name: first?.name, responseView: 'FULL' });
    expect(Buffer.from(full.httpRequest?.body ?? '').toString()).toMatch(/^body-\d$/);
    expect(full.httpRequest?.httpMethod).toBe('POST');
  });

  test('limits: 100 KB task size, dispatch deadline range, tasks need a queue', async () => {
    const parent = await pausedQueue('q-limits');
    const big = { httpRequest: { url, body: Buffer.alloc(101 * 1024) } };
    expect(await grpcCode(client.createTask({ parent, task: big }))).toBe(3);
    const short = { httpRequest: { url }, dispatchDeadline: { seconds: 5 } };
    expect(await grpcCode(client.createTask({ parent, task: short }))).toBe(3);
    const ok = { httpRequest: { url }, dispatchDeadline: { seconds: 1800 } };
    expect((await client.createTask({ parent, task: ok }))[0].dispatchDeadline?.seconds).toBe('1800');
    expect(await grpcCode(client.createTask({ parent: `${location}/queues/missing`, task: ok }))).toBe(5);
  });

  test('purge removes every task and reserves their names', async () => {
    const parent = await pausedQueue('q-purge');
    const name = `${parent}/tasks/t1`;
    await client.createTask({ parent, task: { name, httpRequest: { url } } });
    const [purged] = await client.purgeQueue({ name: parent });
    expect(purged.purgeTime).toBeTruthy();
    expect((await client.listTasks({ parent }))[0]).toHaveLength(0);
    expect(emulator.admin.task(name)?.outcome).toBe('purged');
  });

  test('an injected fault fails the next call with its code, then calls succeed again', async () => {
    const parent = await pausedQueue('q-faults');
    emulator.admin.fail({ method: 'CreateTask', times: 1, code: 8, message: 'quota' });
    expect(await grpcCode(client.createTask({ parent, task: { httpRequest: { url } } }))).toBe(8);
    await client.createTask({ parent, task: { httpRequest: { url } } });
  });
});
