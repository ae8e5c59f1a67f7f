/**
 * A window that fails after some of its flushes were acknowledged: the retry starts at the boundary the sinks
 * acknowledged (not at the last checkpoint), and the history holds every mod exactly once.
 */
import { addMillis } from '../../shared/domain/timestamp';
import { Harness, T0 } from './support/harness';
import { readDataChangesSlowly } from './support/slow-reads';

describe('retry after a partial flush', () => {
  it('keeps the acknowledged boundary and writes no history twice', async () => {
    // No checkpoint inside the window: only the failure's record can move the position.
    const h = new Harness({ roots: 1, config: { flush: { intervalMs: 1_000, checkpointMs: 300_000 } } });
    for (let i = 1; i <= 10; i++)
      h.script.commit(addMillis(T0, i * 100), [{ table: 'Orders', id: i % 4, val: `v${i}` }]);
    // Each record takes 1.5 s to read: every record is its own flush.
    readDataChangesSlowly(h, 1_500);
    h.now = addMillis(T0, 2_000);
    await h.tick();
    const [task] = h.queue.drain();
    const partition = (task!.body as { partition: string }).partition;
    // The history's fifth request fails (one request per flush here): four flushes were acknowledged.
    h.history.faults.fail(1, 14, 4);
    const out = await h.deliver(task!);
    expect(out).toMatchObject({ status: 503 });
    const entry = (await h.ledger.readPartition(0, partition))!.value;
    expect(entry.position).toBe(addMillis(T0, 400));
    expect(entry.failures).toBe(1);
    expect(entry.lastError?.kind).toBe('retryable');
    for (let i = 0; i < 4; i++) {
      h.advance(6_000);
      await h.tick();
      await h.drain();
    }
    expect(h.history.rows('orders_history')).toHaveLength(10);
    expect(h.history.distinct('orders_history')).toBe(10);
    expect(h.replica.rows('orders')).toEqual(h.expected('Orders'));
    const after = (await h.ledger.readPartition(0, partition))!.value;
    expect(after.failures).toBe(0);
  });
});
