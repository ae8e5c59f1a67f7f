/**
 * Planning's crash windows and the objects' lifecycle: a job stored but never enqueued is finished by the
 * next GET, two planners racing on one deterministic id end with one job, a finished job carries the GCS
 * custom time the bucket's lifecycle rule keys on, and the listing shows jobs only.
 */
import { getBackfill, listBackfills, runPartition, startBackfill } from '../../../shared/app/backfill';
import { jobObjects, parsePartitionTask } from '../../../shared/domain/backfill/job';
import type { TaskQueue, TaskRequest } from '../../../shared/ports/task-queue';
import { harness, seedOrders } from './support';

type H = ReturnType<typeof harness>;

async function dispatch(h: H) {
  for (const task of h.queue.drain()) await runPartition(h.deps, parsePartitionTask(task.body));
}

/** A queue whose next `failures` enqueues fail, as a crash between storing and enqueueing would leave it. */
function failingQueue(inner: TaskQueue, failures: number): TaskQueue {
  let left = failures;
  return {
    enqueue: async (task: TaskRequest) => {
      if (left-- > 0) throw new Error('14 UNAVAILABLE: connection reset');
      return inner.enqueue(task);
    },
  };
}

it('a job stored in planning without its tasks is finished by the next GET and then runs', async () => {
  const h = harness();
  seedOrders(h, 6);
  const queue = h.deps.queue;
  h.deps.queue = failingQueue(queue, 1);
  await expect(startBackfill(h.deps, { tables: ['Orders'] })).rejects.toThrow('UNAVAILABLE');
  h.deps.queue = queue;
  const stored = await h.store.read(jobObjects.job('demo', 'job1'));
  expect(stored?.metadata['sluice-state']).toBe('planning');
  const before = h.queue.pending.length;
  const listed = (await listBackfills(h.deps)).backfills;
  expect(listed.map((j) => j.state)).toEqual(['running']);
  const total = listed[0]!.partitions.total;
  expect(before).toBeLessThan(total);
  expect(h.queue.pending).toHaveLength(total);
  await dispatch(h);
  expect(await getBackfill(h.deps, listed[0]!.id)).toMatchObject({ state: 'succeeded', rowsWritten: 6 });
});

it('a worker that arrives while the job is still planning finishes the planning and runs', async () => {
  const h = harness();
  seedOrders(h, 3);
  const queue = h.deps.queue;
  h.deps.queue = failingQueue(queue, 1);
  await expect(startBackfill(h.deps, { tables: ['Orders'] })).rejects.toThrow();
  h.deps.queue = queue;
  const outcome = await runPartition(h.deps, { pipeline: 'demo', job: 'job1', partition: 0 });
  expect(outcome.kind).toBe('done');
  expect(await getBackfill(h.deps, 'job1')).toMatchObject({ state: 'running' });
});

it('two planners racing on one deterministic id end with one job, one snapshot, one set of tasks', async () => {
  const h = harness();
  seedOrders(h, 4);
  const [a, b] = await Promise.all([
    startBackfill(h.deps, { tables: ['Orders'] }, { id: 'start-at-snapshot', origin: 'start-at-snapshot' }),
    startBackfill(h.deps, { tables: ['Orders'] }, { id: 'start-at-snapshot', origin: 'start-at-snapshot' }),
  ]);
  expect(a.ok && b.ok).toBe(true);
  if (!a.ok || !b.ok) return;
  expect(a.value.snapshot).toEqual(b.value.snapshot);
  expect(a.value.plan).toBe(b.value.plan);
  expect(h.queue.pending).toHaveLength(a.value.partitions);
  await dispatch(h);
  expect(h.replica.rows('orders')).toHaveLength(4);
});

it('a finished job and its markers carry a custom time; the listing shows jobs, not markers', async () => {
  const h = harness();
  seedOrders(h, 5);
  const started = await startBackfill(h.deps, { tables: ['Orders'] });
  if (!started.ok) throw new Error(started.problems.join('; '));
  const id = started.value.id;
  const name = jobObjects.job('demo', id);
  expect((await h.store.read(name))?.customTime).toBeUndefined();
  await dispatch(h);
  const job = await h.store.read(name);
  expect(job?.metadata['sluice-state']).toBe('succeeded');
  expect(Date.parse(job?.customTime ?? '')).toBe(Number(h.now() / 1_000_000n));
  const done = await h.store.list(jobObjects.donePrefix('demo', id));
  expect(done.items.length).toBe(started.value.partitions);
  expect(done.items.every((i) => i.customTime !== undefined)).toBe(true);
  const list = (await listBackfills(h.deps)).backfills;
  expect(list.map((j) => j.id)).toEqual([id]);
});
