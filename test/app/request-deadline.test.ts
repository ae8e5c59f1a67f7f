/**
 * A reader stops its window at its own request deadline (derived from the dispatch deadline), at the last
 * boundary it flushed, instead of running on after Cloud Tasks gave up on the request.
 */
import { addMillis } from '../../shared/domain/timestamp';
import { requestDeadlineMs } from '../../shared/wiring/app';
import { Harness, T0 } from './support/harness';
import { onEachRecord, readDataChangesSlowly } from './support/slow-reads';

describe('the request deadline', () => {
  it('is 90 % of the dispatch deadline, at least 10 s before it', () => {
    expect(requestDeadlineMs(600)).toBe(540_000);
    expect(requestDeadlineMs(60)).toBe(50_000);
    expect(requestDeadlineMs(15)).toBe(5_000);
  });

  it('cuts a slow window short at a flushed boundary; the next window goes on from there, nothing lost', async () => {
    const h = new Harness({ roots: 1 });
    Object.assign(h.settings, { requestDeadlineMs: 5_000 });
    for (let i = 1; i <= 10; i++)
      h.script.commit(addMillis(T0, i * 100), [{ table: 'Orders', id: i, val: `v${i}` }]);
    // Each record takes 1.5 s to read: the whole window would take 15 s.
    readDataChangesSlowly(h, 1_500);
    h.now = addMillis(T0, 2_000);
    await h.tick();
    const [task] = h.queue.drain();
    const started = h.now;
    const out = await h.deliver(task!);
    expect(out.status).toBe(200);
    expect(Number((h.now - started) / 1_000_000n)).toBeLessThanOrEqual(6_000);
    const window = h.events('reader.window')[0]!;
    expect(window).toMatchObject({ cutShort: 'request deadline', ended: false });
    const partition = (task!.body as { partition: string }).partition;
    const entry = (await h.ledger.readPartition(0, partition))!.value;
    expect(entry.state).toBe('ready');
    expect(entry.position).toBeGreaterThanOrEqual(addMillis(T0, 100));
    expect(entry.position).toBeLessThan(addMillis(T0, 1_000));
    for (let i = 0; i < 6; i++) {
      h.advance(6_000);
      await h.tick();
      await h.drain();
    }
    expect(h.replica.rows('orders')).toEqual(h.expected('Orders'));
    expect(h.history.distinct('orders_history')).toBe(10);
    expect(h.history.rows('orders_history')).toHaveLength(10);
  });
});

describe('a split reported as several child-partitions records', () => {
  it('is never finished with some of its children when the deadline passes between them', async () => {
    const h = new Harness({ roots: 1 });
    Object.assign(h.settings, { requestDeadlineMs: 5_000 });
    h.script.childRecordEach = true;
    h.now = addMillis(T0, 2_000);
    await h.tick();
    await h.drain();
    const [root] = h.script.roots;
    h.script.split(addMillis(T0, 3_000), root!);
    // One commit per child's half of the key space, after the split: each reaches only its own child.
    h.script.commit(addMillis(T0, 3_500), [
      { table: 'Orders', id: 0, val: 'left' },
      { table: 'Orders', id: 1, val: 'right' },
      { table: 'Orders', id: 2, val: 'more' },
      { table: 'Orders', id: 3, val: 'more' },
    ]);
    // The deadline passes right after the first of the split's records.
    let slowed = false;
    onEachRecord(h, (r, query) => {
      if (r.kind === 'child-partitions' && query.partitionToken !== null && !slowed) {
        slowed = true;
        h.advance(6_000);
      }
    });
    for (let i = 0; i < 6; i++) {
      await h.tick();
      await h.drain();
      h.advance(6_000);
    }
    expect(slowed).toBe(true);
    expect(h.events('partition.finished').map((e) => e.children)).toEqual([2]);
    expect(h.replica.rows('orders')).toEqual(h.expected('Orders'));
  });
});
