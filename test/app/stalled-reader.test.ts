/**
 * A reader that stalls after reading its partition's child-partitions record, past its lease, while another
 * reader finishes the whole lineage and the scheduler removes it, is harmless when it resumes: it creates no
 * children, and the scheduler deletes any waiting entry whose parents are all gone.
 */
import { entriesFromChildPartitions, partitionId } from '../../shared/domain/ledger';
import { addMillis } from '../../shared/domain/timestamp';
import { Harness, T0 } from './support/harness';

async function settle(h: Harness, rounds = 6) {
  for (let i = 0; i < rounds; i++) {
    h.advance(6_000);
    await h.tick();
    await h.drain();
  }
}

describe('a stalled reader', () => {
  it('resumed after the lineage completed resurrects nothing; the watermark moves on', async () => {
    const h = new Harness({ roots: 1 });
    const [root] = h.script.roots;
    h.script.commit(addMillis(T0, 100), [{ table: 'Orders', id: 1, val: 'a' }]);
    h.script.split(addMillis(T0, 2_000), root!);
    const [c1, c2] = h.script.parts.get(root!)!.children.map((c) => c.token);
    h.script.merge(addMillis(T0, 4_000), c1!, c2!);
    h.script.commit(addMillis(T0, 4_500), [{ table: 'Orders', id: 2, val: 'b' }]);
    h.now = addMillis(T0, 5_000);
    await h.tick();
    const [task] = h.queue.drain();
    // The first reader stalls once its last flush was acknowledged, after the child-partitions record.
    let release = () => undefined as void;
    const stalled = new Promise<void>((r) => {
      release = r;
    });
    let blocked = false;
    const appendAt = h.history.appendAt.bind(h.history);
    h.history.appendAt = async (...args: Parameters<typeof appendAt>) => {
      const out = await appendAt(...args);
      if (!blocked) {
        blocked = true;
        await stalled;
      }
      return out;
    };
    const first = h.deliver(task!);
    while (!blocked) await new Promise((r) => setImmediate(r));
    // Its lease expires; another reader takes over and the lineage runs to the end and is removed.
    h.advance(61_000);
    await settle(h);
    const ids = [root!, c1!, c2!].map(partitionId);
    const listed = async () => (await h.ledger.listPartitions()).partitions.map((p) => p.view.id);
    expect((await listed()).filter((id) => ids.includes(id))).toEqual([]);
    const watermark = (await h.tick()).status!.watermark;
    // The first reader resumes.
    release();
    const out = await first;
    expect(out).toMatchObject({ status: 200, outcome: 'noop' });
    expect((await listed()).filter((id) => ids.includes(id))).toEqual([]);
    await settle(h, 2);
    const status = (await h.tick()).status!;
    expect(status.watermark! > watermark!).toBe(true);
    expect(h.replica.rows('orders')).toEqual(h.expected('Orders'));
  });

  it('the scheduler deletes a waiting entry whose parents are all gone, and logs it', async () => {
    const h = new Harness({ roots: 1 });
    h.now = addMillis(T0, 5_000);
    await h.tick();
    await h.drain();
    // As a reader that stalled past everything would leave it: children of a parent long removed.
    const orphans = entriesFromChildPartitions(
      {
        kind: 'child-partitions',
        startTimestamp: addMillis(T0, 1_000),
        recordSequence: '0',
        childPartitions: [{ token: 'gone-child', parentPartitionTokens: ['gone-parent'] }],
      },
      0,
    );
    for (const o of orphans) await h.ledger.createPartition(o);
    const before = (await h.tick()).status!;
    expect(h.events('partition.orphan-removed')).toHaveLength(1);
    expect(h.events('partition.orphan-removed')[0]).toMatchObject({ partition: partitionId('gone-child') });
    const ids = (await h.ledger.listPartitions()).partitions.map((p) => p.view.id);
    expect(ids).not.toContain(partitionId('gone-child'));
    // It never held the watermark back.
    expect(before.watermark).not.toBe(null);
    expect(before.watermark! > '2026-01-01T00:00:01.000000000Z').toBe(true);
  });
});
