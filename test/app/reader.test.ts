/** Reader invariants over in-memory ports: duplicates, faults, kills, heartbeats, merges, boundaries. */
import { addMillis } from '../../shared/domain/timestamp';
import { FlakyStore } from './support/flaky-store';
import { Harness, T0 } from './support/harness';

/** A started pipeline with a few commits on both root partitions, tasks enqueued but not run. */
async function started(h = new Harness()) {
  h.script.commit(addMillis(T0, 100), [
    { table: 'Orders', id: 1, val: 'a' },
    { table: 'Orders', id: 2, val: 'b' },
  ]);
  h.script.commit(addMillis(T0, 200), [
    { table: 'Orders', id: 1, val: 'a2' },
    { table: 'Items', id: 3, val: 'c' },
  ]);
  h.now = addMillis(T0, 1_000);
  await h.tick();
  return h;
}

async function settle(h: Harness, rounds = 5) {
  for (let i = 0; i < rounds; i++) {
    h.advance(6_000);
    await h.tick();
    await h.drain();
  }
}

function replicaMatches(h: Harness) {
  expect(h.replica.rows('orders')).toEqual(h.expected('Orders'));
  expect(h.replica.rows('items')).toEqual(h.expected('Items'));
}

describe('reader', () => {
  it('a duplicate delivery of the same task is a 2xx no-op', async () => {
    const h = await started();
    const [task] = h.queue.drain();
    const first = await h.deliver(task!);
    const again = await h.deliver(task!);
    expect(first).toMatchObject({ status: 200, outcome: 'window' });
    expect(again).toMatchObject({ status: 200, outcome: 'noop' });
    expect(again.detail).toMatch(/stale task/);
  });

  it('a concurrent duplicate finds the lease held and does nothing', async () => {
    const h = await started();
    const [task] = h.queue.drain();
    h.replica.faults.hang = true;
    void h.deliver(task!); // holds the lease, stuck in the sink
    await new Promise((r) => setImmediate(r));
    const dup = await h.deliver(task!);
    expect(dup).toMatchObject({ status: 200, outcome: 'noop' });
    expect(dup.detail).toMatch(/leased by/);
  });

  it('an unknown partition is a 2xx no-op, logged', async () => {
    const h = await started();
    const out = await h
      .reader()
      .run({ pipeline: 'sluice', epoch: 0, partition: 'f'.repeat(32), position: T0 });
    expect(out).toMatchObject({ status: 200, outcome: 'noop' });
    expect(out.detail).toMatch(/unknown partition/);
  });

  it('source UNAVAILABLE mid-stream answers 503, records the error, loses nothing', async () => {
    const h = await started();
    h.script.fault = { after: 1, code: 14 };
    await h.drain();
    expect(h.outcomes.some((o) => o.status === 503)).toBe(true);
    await settle(h);
    replicaMatches(h);
  });

  it('a sink append failure answers 503 and does not advance the position', async () => {
    const h = await started();
    h.history.faults.fail(1, 14);
    const tasks = h.queue.drain();
    const outs = [];
    for (const t of tasks) outs.push(await h.deliver(t));
    const failed = outs.findIndex((o) => o.status === 503);
    expect(failed).toBeGreaterThanOrEqual(0);
    const body = tasks[failed]!.body as { partition: string };
    const entry = (await h.ledger.readPartition(0, body.partition))!.value;
    expect(entry.position).toBe(addMillis(T0, 0) - 1n);
    expect(entry.lastError?.kind).toBe('retryable');
    await settle(h);
    replicaMatches(h);
    expect(h.history.rows('orders_history')).toHaveLength(3);
    expect(h.history.distinct('orders_history')).toBe(3);
  });

  it('a reader killed mid-window (stuck in the sink) loses nothing: the lease expires and another takes over', async () => {
    const h = await started();
    h.replica.faults.hang = true;
    const tasks = h.queue.drain();
    for (const t of tasks) void h.deliver(t);
    const firstIds = tasks.map((t) => t.id);
    await new Promise((r) => setTimeout(r, 10));
    h.replica.faults.hang = false;
    h.advance(61_000); // past the 60 s lease
    const report = await h.tick();
    // Only the partition holding the written keys was stuck; its expired lease is taken over by a new task.
    expect(report.status!.partitions.leased).toBe(1);
    // The status names the stalled lease: partition, holder, since when it may be taken over.
    expect(report.status!.stalled).toEqual([
      {
        partition: expect.any(String),
        holder: expect.stringMatching(/^reader/),
        leaseExpiredAt: expect.any(String),
        secondsPastLease: expect.any(Number),
      },
    ]);
    expect(report.status!.stalled![0]!.secondsPastLease).toBeGreaterThan(0);
    expect(h.queue.pending.filter((t) => !firstIds.includes(t.id)).length).toBeGreaterThanOrEqual(1);
    await settle(h);
    replicaMatches(h);
    expect((await h.tick()).status!.stalled).toEqual([]);
  });

  it('a reader killed after the sinks acknowledged but before its ledger write loses nothing and writes nothing twice', async () => {
    const store = new FlakyStore();
    const h = await started(new Harness({ store }));
    const tasks = h.queue.drain();
    const origWrite = store.write.bind(store);
    // Every ledger write once BigQuery holds history rows hangs: the reader is as good as dead.
    store.write = async (name, data, options) => {
      if (name.includes('/partitions/') && h.history.rows('orders_history').length > 0)
        return new Promise<never>(() => undefined);
      return origWrite(name, data, options);
    };
    for (const t of tasks) void h.deliver(t);
    await new Promise((r) => setTimeout(r, 10));
    // The sinks have the rows; the ledger does not know.
    expect(h.history.rows('orders_history')).toHaveLength(3);
    store.write = origWrite;
    h.advance(61_000);
    await settle(h);
    replicaMatches(h);
    expect(h.history.rows('orders_history')).toHaveLength(3);
    expect(h.history.distinct('orders_history')).toBe(3);
    expect(h.events('history.rows-already-written').length).toBeGreaterThan(0);
  });

  it('a quiet partition moves the watermark through heartbeats', async () => {
    const h = new Harness();
    h.now = addMillis(T0, 1_000);
    await h.tick();
    await h.drain();
    h.advance(20_000);
    await h.tick();
    await h.drain();
    const status = (await h.tick()).status!;
    expect(h.script.mods).toBe(0);
    expect(status.watermark).not.toBeNull();
    expect(BigInt(Date.parse(status.watermark!)) * 1_000_000n).toBeGreaterThan(addMillis(T0, 15_000));
  });

  it("a merge's child starts only after all its parents finished", async () => {
    const h = await started();
    await h.drain();
    const [a, b] = h.script.roots;
    h.script.merge(addMillis(T0, 2_000), a!, b!);
    const child = [...h.script.parts.values()].find((p) => p.parents.length === 2)!;
    h.script.commit(addMillis(T0, 2_500), [{ table: 'Orders', id: 1, val: 'merged' }]);
    h.now = addMillis(T0, 7_000);
    // Run only the first parent's window: the child must wait.
    await h.tick();
    const tasks = h.queue.drain();
    await h.deliver(tasks[0]!);
    const listed = (await h.ledger.listPartitions()).partitions.map((p) => p.view);
    const { partitionId } = await import('../../shared/domain/ledger');
    const c = listed.find((v) => v.id === partitionId(child.token))!;
    expect(c.state).toBe('waiting');
    expect(h.queue.pending.some((t) => (t.body as { partition: string }).partition === c.id)).toBe(false);
    await h.deliver(tasks[1]!);
    expect(h.queue.pending.some((t) => (t.body as { partition: string }).partition === c.id)).toBe(true);
    await settle(h);
    replicaMatches(h);
  });

  it('a child-partitions record exactly at the window end is not lost', async () => {
    const h = await started();
    await h.drain();
    const [a] = h.script.roots;
    h.script.split(addMillis(T0, 6_000), a!);
    h.script.commit(addMillis(T0, 6_001), [
      { table: 'Orders', id: 0, val: 'child' },
      { table: 'Orders', id: 1, val: 'child' },
    ]);
    h.now = addMillis(T0, 6_000); // windows end exactly at the split
    await h.tick();
    await h.drain();
    const entry = (await h.ledger.listPartitions()).partitions.find(
      (p) => p.view.childIds !== null && p.view.childIds.length === 2,
    );
    expect(entry?.view.state).toBe('finished');
    await settle(h);
    replicaMatches(h);
  });

  it('a permanent source error fails the partition (2xx), shows in status, holds the watermark', async () => {
    const h = await started();
    h.script.fault = { after: 0, code: 5 };
    const [task] = h.queue.drain();
    const out = await h.deliver(task!);
    expect(out).toMatchObject({ status: 200, outcome: 'failed' });
    const status = (await h.tick()).status!;
    expect(status.partitions.failed).toBe(1);
    expect(status.lastErrors[0]).toMatchObject({ kind: 'permanent' });
    expect(status.lastErrors[0]!.message).toMatch(/injected stream failure/);
  });

  it('continuous mode reads past now within the long poll and checkpoints during the window', async () => {
    const h = await started(
      new Harness({ config: { mode: 'continuous', flush: { intervalMs: 100, checkpointMs: 1_000 } } }),
    );
    await h.drain(4);
    replicaMatches(h);
    expect(h.queue.pending.every((t) => t.notBeforeMs === undefined)).toBe(true);
  });
});
