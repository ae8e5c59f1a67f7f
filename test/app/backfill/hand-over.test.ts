/**
 * The scheduler's two hand-overs from a snapshot to the stream, over in-memory ports with one truth for
 * both (every commit goes to the scripted change stream and to the multi-version snapshot source):
 * `startAt: "snapshot"` on a new pipeline, and the retention fallback `restart-and-backfill`. After the
 * readers and the backfill workers drain, each replica equals the truth: nothing before T is missing, and
 * no snapshot row overwrote a later change.
 */
import { MemorySnapshotSource } from '../../../shared/adapters/memory/snapshot-source';
import { MemoryTaskQueue } from '../../../shared/adapters/memory/task-queue';
import { backfillStarter, getBackfill, runPartition } from '../../../shared/app/backfill';
import type { BackfillDeps } from '../../../shared/app/backfill/deps';
import { Scheduler } from '../../../shared/app/replication/scheduler/scheduler';
import { parsePartitionTask } from '../../../shared/domain/backfill/job';
import type { PipelineConfigInput } from '../../../shared/domain/config';
import { createLogger } from '../../../shared/domain/log';
import { addNanos, type Timestamp } from '../../../shared/domain/timestamp';
import { Harness, T0 } from '../support/harness';
import type { ScriptMod } from '../support/script';

/** The harness plus a snapshot source and a backfill queue over the same truth. */
function setup(config: Partial<PipelineConfigInput>) {
  const h = new Harness({ config });
  const snapshots = new MemorySnapshotSource(() => h.now, 3_600_000_000_000n);
  const backfillQueue = new MemoryTaskQueue();
  let ids = 0;
  const deps: BackfillDeps = {
    config: h.settings.config,
    store: h.store,
    queue: backfillQueue,
    snapshots,
    catalog: h.catalog,
    replica: h.replica,
    history: h.history,
    workerUrl: 'http://127.0.0.1:1/backfills/tasks',
    now: () => h.now,
    newId: () => `job${++ids}`,
    log: createLogger(() => undefined),
    batchRows: 3,
  };
  const commit = (at: Timestamp, mods: ScriptMod[]) => {
    h.script.commit(at, mods);
    for (const m of mods) {
      const row = { Id: String(m.id), Val: m.val ?? '' };
      snapshots.write(m.table, ['Id'], row, at, m.val === null);
    }
  };
  const scheduler = () =>
    new Scheduler({ ...h.ports(), backfills: backfillStarter(deps) }, h.settings, h.runtime());
  /** Runs backfill tasks (retrying refused ones, like Cloud Tasks) and reader tasks until both queues are empty. */
  const drainAll = async () => {
    for (let round = 0; round < 50; round++) {
      const tasks = backfillQueue.drain();
      for (const t of tasks) await runPartition(deps, parsePartitionTask(t.body));
      const ran = await h.drain();
      if (tasks.length === 0 && ran === 0) return;
    }
  };
  return { h, deps, snapshots, commit, scheduler, drainAll };
}

function values(rows: Array<Record<string, unknown>>) {
  return rows.map((r) => `${r.Id}=${r.Val}`).sort();
}

describe('startAt: "snapshot"', () => {
  it('backfills every replica table at T, starts the stream at T + 1 ns, and the replica equals the truth', async () => {
    const s = setup({ startAt: 'snapshot' });
    for (let i = 1; i <= 12; i++)
      s.commit(addNanos(T0, i * 1000), [{ table: 'Orders', id: i, val: `pre${i}` }]);
    s.commit(addNanos(T0, 20_000), [{ table: 'Items', id: 1, val: 'item' }]);
    s.commit(addNanos(T0, 21_000), [{ table: 'Orders', id: 12, val: null }]);
    await s.scheduler().tick();
    const job = await getBackfill(s.deps, 'start-at-snapshot');
    expect(job).toMatchObject({ origin: 'start-at-snapshot', state: 'running', targets: ['replica'] });
    const manifest = (await s.h.ledger.readManifest())!.value;
    expect(manifest.start).toBe(addNanos(s.h.now, 1n));
    // The workload goes on after T: updates of snapshot rows, deletes and inserts.
    s.h.advance(10);
    s.commit(s.h.now, [
      { table: 'Orders', id: 3, val: 'post3' },
      { table: 'Orders', id: 4, val: null },
    ]);
    s.h.advance(10);
    s.commit(s.h.now, [
      { table: 'Orders', id: 40, val: 'new40' },
      { table: 'Items', id: 1, val: 'item2' },
    ]);
    s.h.advance(3_000);
    for (let i = 0; i < 4; i++) {
      await s.scheduler().tick();
      await s.drainAll();
      s.h.advance(3_000);
    }
    expect(await getBackfill(s.deps, 'start-at-snapshot')).toMatchObject({
      state: 'succeeded',
      rowsWritten: 12,
    });
    expect(values(s.h.replica.rows('orders'))).toEqual(values(s.h.expected('Orders')));
    expect(values(s.h.replica.rows('items'))).toEqual(values(s.h.expected('Items')));
    expect(values(s.h.replica.rows('orders'))).toContain('3=post3');
  });

  it('a crash between the backfill and the manifest, and two first ticks at once, give one job and one T', async () => {
    const s = setup({ startAt: 'snapshot' });
    s.commit(addNanos(T0, 1000), [{ table: 'Orders', id: 1, val: 'a' }]);
    const first = await backfillStarter(s.deps).start(
      { tables: ['Orders', 'Items'], targets: ['replica'] },
      { id: 'start-at-snapshot', origin: 'start-at-snapshot' },
    );
    if (!first.ok) throw new Error(first.problems.join('; '));
    s.h.advance(5_000);
    await Promise.all([s.scheduler().tick(), s.scheduler().tick()]);
    const manifest = (await s.h.ledger.readManifest())!.value;
    expect(manifest.start).toBe(addNanos(first.value.snapshot.readTimestamp, 1n));
    expect(s.snapshots.partitionRequests).toHaveLength(2); // one per table, from the first call only
  });

  it('refuses to start when the scheduler has no backfill wiring, saying what to set', async () => {
    const h = new Harness({ config: { startAt: 'snapshot' } });
    await expect(h.tick()).rejects.toThrow(/SLUICE_BACKFILL_QUEUE and SLUICE_BACKFILL_URL/);
  });
});

describe('retention fallback restart-and-backfill', () => {
  it('restarts the ledger just after a snapshot of the replicas, repairing the lost interval', async () => {
    const s = setup({ retentionFallback: 'restart-and-backfill' });
    s.h.catalog.options = { ...s.h.catalog.options, retentionSeconds: 3_600 };
    await s.scheduler().tick();
    s.h.advance(10);
    s.commit(s.h.now, [
      { table: 'Orders', id: 1, val: 'one' },
      { table: 'Orders', id: 2, val: 'two' },
    ]);
    s.h.advance(3_000);
    await s.scheduler().tick();
    await s.drainAll();
    expect(values(s.h.replica.rows('orders'))).toEqual(['1=one', '2=two']);
    // The pipeline stalls; changes keep coming, then the positions fall out of the stream's retention.
    s.h.advance(60_000);
    s.commit(s.h.now, [
      { table: 'Orders', id: 1, val: 'one-b' },
      { table: 'Orders', id: 3, val: 'three' },
    ]);
    s.h.queue.drain();
    s.h.advance(3_700_000);
    await s.scheduler().tick();
    const manifest = (await s.h.ledger.readManifest())!.value;
    const job = await getBackfill(s.deps, 'retention-epoch-1');
    expect(job).toMatchObject({ origin: 'retention-fallback', state: 'running' });
    expect(manifest).toMatchObject({ epoch: 1, state: 'running', start: addNanos(s.h.now, 1n) });
    s.h.advance(10);
    s.commit(s.h.now, [{ table: 'Orders', id: 2, val: 'two-c' }]);
    s.h.advance(3_000);
    for (let i = 0; i < 3; i++) {
      await s.scheduler().tick();
      await s.drainAll();
      s.h.advance(3_000);
    }
    expect(await getBackfill(s.deps, 'retention-epoch-1')).toMatchObject({ state: 'succeeded' });
    expect(values(s.h.replica.rows('orders'))).toEqual(['1=one-b', '2=two-c', '3=three']);
  });
});
