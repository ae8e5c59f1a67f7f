import {
  cancelBackfill,
  getBackfill,
  listBackfills,
  runPartition,
  startBackfill,
} from '../../../shared/app/backfill';
import { parsePartitionTask } from '../../../shared/domain/backfill/job';
import { SluiceError } from '../../../shared/domain/errors';
import { formatTimestamp } from '../../../shared/domain/timestamp';
import { harness, seedOrders } from './support';

type H = ReturnType<typeof harness>;

/** Delivers every queued task once (and returns the outcomes). */
async function dispatch(h: H) {
  const outcomes = [];
  for (const task of h.queue.drain())
    outcomes.push(await runPartition(h.deps, parsePartitionTask(task.body)));
  return outcomes;
}

async function start(h: H, body: Parameters<typeof startBackfill>[1]) {
  const started = await startBackfill(h.deps, body);
  if (!started.ok) throw new Error(started.problems.join('; '));
  return started.value;
}

/** The partition tasks queued so far, taken from the queue. */
const partitionTasks = (h: H) => h.queue.drain().map((t) => parsePartitionTask(t.body));

/** A backfill of Orders started over `rows` seeded orders. */
async function ordersBackfill(rows: number) {
  const h = harness();
  seedOrders(h, rows);
  const job = await start(h, { tables: ['Orders'] });
  return { h, job };
}

describe('startBackfill', () => {
  it('plans one task per partition with deterministic ids and stores the job running', async () => {
    const h = harness();
    seedOrders(h, 5);
    const job = await start(h, { tables: ['Orders', 'Items'], dataBoost: true, priority: 'low' });
    expect(job.state).toBe('running');
    expect(job.partitions).toBe(6);
    expect(job.targets).toEqual(['replica', 'history']);
    const tasks = h.queue.pending.map((t) => t.id);
    expect(new Set(tasks).size).toBe(6);
    expect(tasks.every((id) => /^[0-9a-f]{8}-backfill-job1-\d+$/.test(id))).toBe(true);
    expect(h.queue.pending[0]!.url).toBe('http://127.0.0.1:1/backfills/tasks');
    // The projection holds the keys and the watched columns only (Secret is not watched).
    expect(h.snapshots.partitionRequests[0]).toMatchObject({
      columns: ['OrderId', 'Customer', 'Amount'],
      dataBoost: true,
      priority: 'low',
    });
    expect(h.replica.ensured).toEqual(['orders', 'items']);
    expect((await getBackfill(h.deps, job.id))?.state).toBe('running');
  });

  it.each([
    [{ tables: ['Nope'] }, 'unknown table Nope'],
    [{ tables: ['Unwatched'] }, 'not watched by change stream Everything'],
    [{ tables: ['Unconfigured'] }, 'has no configured target'],
    [{ tables: ['Items'], targets: ['history' as const] }, 'table Items has no configured history table'],
    [{ tables: ['Orders'], readTimestamp: 1_800_000_000_000_000_000n }, 'is in the future'],
  ])('refuses %j naming the problem, starting nothing', async (body, message) => {
    const h = harness();
    const started = await startBackfill(h.deps, body as Parameters<typeof startBackfill>[1]);
    expect(started.ok).toBe(false);
    if (!started.ok) expect(started.problems.join('\n')).toContain(message);
    expect(h.queue.pending).toHaveLength(0);
    expect(h.store.calls.write).toBe(0);
    expect(h.snapshots.partitionRequests).toHaveLength(0);
  });

  it('refuses a readTimestamp older than the version retention with the way to raise it', async () => {
    const h = harness({ retentionNs: 1_000_000n });
    const old = h.now();
    h.tick(10_000_000n);
    const started = await startBackfill(h.deps, { tables: ['Orders'], readTimestamp: old });
    expect(started.ok).toBe(false);
    if (!started.ok) {
      expect(started.problems[0]).toContain('version_retention_period');
      expect(started.problems[0]).toContain(
        "ALTER DATABASE `shop` SET OPTIONS (version_retention_period = '7d')",
      );
    }
    expect(h.store.calls.write).toBe(0);
  });

  it('accepts a caller-chosen id and origin (the scheduler entry point); a repeat returns the same job', async () => {
    const h = harness();
    const started = await startBackfill(
      h.deps,
      { tables: ['Orders'] },
      { id: 'e3-snapshot', origin: 'start-at-snapshot' },
    );
    expect(started.ok && started.value.origin).toBe('start-at-snapshot');
    h.tick(5_000n);
    const again = await startBackfill(h.deps, { tables: ['Items'] }, { id: 'e3-snapshot' });
    expect(again.ok && again.value).toEqual(started.ok && started.value);
    expect(h.snapshots.partitionRequests).toHaveLength(1);
  });
});

describe('partition workers', () => {
  it('load the snapshot at T into the replica and history, and progress equals what was written', async () => {
    const { h, job } = await ordersBackfill(7);
    const T = job.snapshot.readTimestamp;
    // Changes after T are not in the snapshot.
    h.snapshots.write(
      'Orders',
      ['OrderId'],
      { OrderId: '99', Customer: 'late', Amount: '1', Secret: 'x' },
      h.tick(),
    );
    const outcomes = await dispatch(h);
    expect(outcomes.every((o) => o.kind === 'done')).toBe(true);
    const view = await getBackfill(h.deps, job.id);
    expect(view).toMatchObject({ state: 'succeeded', partitions: { done: 3, total: 3 }, rowsWritten: 7 });
    expect(view?.finishedAt).not.toBeNull();
    const expected = h.snapshots.rowsAt('Orders', T).map(({ Secret: _s, ...r }) => r);
    expect(h.replica.rows('orders')).toEqual(
      expected.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)),
    );
    expect(h.replica.written).toBe(view?.rowsWritten);
    const history = h.history.rows;
    expect(history).toHaveLength(7);
    expect(new Set(history.map((r) => r.change_id)).size).toBe(7);
    expect(
      history.every((r) => r.mod_type === 'SNAPSHOT' && r.commit_timestamp_ns === formatTimestamp(T)),
    ).toBe(true);
    expect(h.snapshots.closed).toEqual([job.snapshot.transaction]);
    expect(h.lines.some((l) => l.includes('"backfill.partition"') && l.includes('"rows"'))).toBe(true);
  });

  it('writes rows with large values in smaller batches, so memory stays bounded whatever the cells', async () => {
    const h = harness();
    h.deps.batchRows = 1_000;
    h.deps.batchBytes = 3_000;
    for (let i = 1; i <= 24; i++)
      h.snapshots.write('Items', ['ItemId'], { ItemId: `s${i}`, Name: 'x'.repeat(1_000) }, h.tick());
    const writes: number[] = [];
    const write = h.replica.write.bind(h.replica);
    h.replica.write = async (d, changes) => {
      writes.push(changes.length);
      return write(d, changes);
    };
    await start(h, { tables: ['Items'] });
    expect((await dispatch(h)).every((o) => o.kind === 'done')).toBe(true);
    expect(h.replica.rows('items')).toHaveLength(24);
    // About 1,000 bytes a row and a 3,000-byte budget: at most 3 rows a batch (1,000 rows would allow 24).
    expect(Math.max(...writes)).toBeLessThanOrEqual(3);
    expect(writes.length).toBeGreaterThanOrEqual(8);
  });

  it('a crash mid-partition is retried whole to the same end state', async () => {
    const { h, job } = await ordersBackfill(9);
    const unavailable = Object.assign(new Error('14 UNAVAILABLE: connection reset'), { code: 14 });
    h.snapshots.failReads(2, unavailable);
    const [first, ...rest] = h.queue.drain();
    const task = parsePartitionTask(first!.body);
    await expect(runPartition(h.deps, task)).rejects.toMatchObject({ kind: 'retryable' });
    expect((await getBackfill(h.deps, job.id))?.partitions.done).toBe(0);
    expect(await runPartition(h.deps, task)).toMatchObject({ kind: 'done' });
    for (const t of rest) await runPartition(h.deps, parsePartitionTask(t.body));
    const view = await getBackfill(h.deps, job.id);
    expect(view).toMatchObject({ state: 'succeeded', rowsWritten: 9 });
    expect(h.replica.rows('orders')).toHaveLength(9);
    // The failed attempt's history never became visible: its pending stream was not committed.
    expect(h.history.rows).toHaveLength(9);
    expect(new Set(h.history.rows.map((r) => r.change_id)).size).toBe(9);
  });

  it('a sink failure that is retryable answers retry; the re-run completes', async () => {
    const { h } = await ordersBackfill(4);
    h.replica.failNext.push(Object.assign(new Error('unavailable'), { code: 14 }));
    const tasks = partitionTasks(h);
    const results = await Promise.allSettled(tasks.map((t) => runPartition(h.deps, t)));
    const failed = tasks.filter((_, i) => results[i]!.status === 'rejected');
    expect(failed).toHaveLength(1);
    for (const t of failed) await runPartition(h.deps, t);
    expect(h.replica.rows('orders')).toHaveLength(4);
  });

  it('a duplicated partition task is a no-op and progress counts the partition once', async () => {
    const { h, job } = await ordersBackfill(6);
    const tasks = partitionTasks(h);
    await Promise.all([runPartition(h.deps, tasks[0]!), runPartition(h.deps, tasks[0]!)]);
    expect(await runPartition(h.deps, tasks[0]!)).toEqual({ kind: 'skipped', reason: 'already-done' });
    const mid = await getBackfill(h.deps, job.id);
    expect(mid?.partitions.done).toBe(1);
    for (const t of tasks.slice(1)) await runPartition(h.deps, t);
    const view = await getBackfill(h.deps, job.id);
    expect(view).toMatchObject({ state: 'succeeded', partitions: { done: 3, total: 3 }, rowsWritten: 6 });
    // Two deliveries each wrote a pending stream; only the claimed one was committed.
    expect(h.history.created.length).toBeGreaterThanOrEqual(3);
    expect(h.history.rows).toHaveLength(6);
    expect(new Set(h.history.rows.map((r) => r.change_id)).size).toBe(6);
    expect(h.replica.rows('orders')).toHaveLength(6);
  });

  it('a retry after the done marker failed never re-appends a committed partition, even when BigQuery forgot the stream', async () => {
    const { h, job } = await ordersBackfill(4);
    const tasks = partitionTasks(h);
    const first = tasks.find((t) => t.partition === 0)!;
    const unavailable = Object.assign(new Error('503 Service Unavailable'), { code: 503 });
    h.store.failNextWrite((name) => name.endsWith('/done/000000.json'), unavailable);
    await expect(runPartition(h.deps, first)).rejects.toThrow('503');
    const committed = h.history.rows.length;
    h.history.forgetStreams();
    // Cloud Tasks delivers again while the answer is a retry.
    for (let attempt = 0; attempt < 3; attempt++)
      if (
        await runPartition(h.deps, first).then(
          () => true,
          () => false,
        )
      )
        break;
    for (const t of tasks.filter((t) => t !== first)) await runPartition(h.deps, t);
    expect(committed).toBeGreaterThan(0);
    expect(await getBackfill(h.deps, job.id)).toMatchObject({ state: 'succeeded', rowsWritten: 4 });
    expect(h.history.rows).toHaveLength(4);
    expect(new Set(h.history.rows.map((r) => r.change_id)).size).toBe(4);
  });

  it('a commit sent but never recorded, its stream since forgotten, fails the job by name instead of re-reading', async () => {
    const { h, job } = await ordersBackfill(4);
    const first = h.queue
      .drain()
      .map((t) => parsePartitionTask(t.body))
      .find((t) => t.partition === 0)!;
    const unavailable = Object.assign(new Error('503 Service Unavailable'), { code: 503 });
    let claimWrites = 0;
    // The second write of the claim (recording the commit done) answers 503.
    h.store.failNextWrite(
      (name) => name.endsWith('/history/000000.json') && ++claimWrites === 3,
      unavailable,
    );
    await expect(runPartition(h.deps, first)).rejects.toThrow('503');
    const rows = h.history.rows.length;
    h.history.forgetStreams();
    expect(await runPartition(h.deps, first)).toMatchObject({ kind: 'failed' });
    expect((await getBackfill(h.deps, job.id))?.error).toMatch(
      /whether its rows are in the history table cannot be told/,
    );
    expect(h.history.rows).toHaveLength(rows);
  });

  it('cancel turns the remaining tasks into no-ops', async () => {
    const { h, job } = await ordersBackfill(6);
    const [first, ...rest] = partitionTasks(h);
    await runPartition(h.deps, first!);
    const cancelled = await cancelBackfill(h.deps, job.id);
    expect(cancelled).toMatchObject({ state: 'cancelled', partitions: { done: 1, total: 3 } });
    const reads = h.snapshots.reads;
    for (const t of rest)
      expect(await runPartition(h.deps, t)).toEqual({ kind: 'skipped', reason: 'cancelled' });
    expect(h.snapshots.reads).toBe(reads);
    expect((await cancelBackfill(h.deps, job.id))?.state).toBe('cancelled');
    expect(await cancelBackfill(h.deps, 'missing')).toBeUndefined();
    expect(await getBackfill(h.deps, '../x')).toBeUndefined();
  });

  it('a snapshot that outlives the version retention fails the job with how to raise it', async () => {
    const h = harness({ retentionNs: 1_000_000_000n });
    seedOrders(h, 3);
    const job = await start(h, { tables: ['Orders'] });
    h.tick(5_000_000_000n);
    const tasks = partitionTasks(h);
    const outcome = await runPartition(h.deps, tasks[0]!);
    expect(outcome.kind).toBe('failed');
    const view = await getBackfill(h.deps, job.id);
    expect(view?.state).toBe('failed');
    expect(view?.error).toContain("older than the database's version_retention_period");
    expect(view?.error).toContain("version_retention_period = '7d'");
    expect(await runPartition(h.deps, tasks[1]!)).toEqual({ kind: 'skipped', reason: 'job-finished' });
  });

  it('a permanent sink failure fails the job; an unknown job is a permanent error', async () => {
    const h = harness();
    seedOrders(h, 2);
    const job = await start(h, { tables: ['Orders'], maxPartitions: 1 });
    h.replica.failNext.push(Object.assign(new Error('table gone'), { code: 5 }));
    const [task] = partitionTasks(h);
    expect(await runPartition(h.deps, task!)).toMatchObject({
      kind: 'failed',
      error: expect.stringContaining('table gone'),
    });
    expect((await getBackfill(h.deps, job.id))?.state).toBe('failed');
    await expect(
      runPartition(h.deps, { pipeline: 'demo', job: 'nope', partition: 0 }),
    ).rejects.toBeInstanceOf(SluiceError);
  });

  it('lists recent jobs newest first', async () => {
    const h = harness();
    await start(h, { tables: ['Orders'] });
    h.tick();
    await start(h, { tables: ['Items'] });
    const list = (await listBackfills(h.deps)).backfills;
    expect(list.map((j) => j.id)).toEqual(['job2', 'job1']);
  });
});
