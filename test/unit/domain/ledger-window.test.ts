import {
  entriesFromChildPartitions,
  isRemovable,
  lagMillis,
  observe,
  type PartitionView,
  planTick,
  planWindow,
  startWindow,
  viewOf,
  watermark,
  windowId,
} from '../../../shared/domain/ledger';
import { addMillis, addNanos, parseTimestamp } from '../../../shared/domain/timestamp';

const T = parseTimestamp('2024-01-31T12:00:00Z');
const ns = (n: number) => addNanos(T, BigInt(n));
const [base] = entriesFromChildPartitions(
  {
    kind: 'child-partitions',
    startTimestamp: T,
    recordSequence: '0',
    childPartitions: [{ token: 'p', parentPartitionTokens: [] }],
  },
  1,
);
const view = (over: Partial<PartitionView>): PartitionView => ({ ...viewOf(base!), ...over });

describe('planWindow', () => {
  const scheduled = { mode: 'scheduled' as const, maxWindowMs: 60_000, longPollMs: 0 };
  const continuous = { mode: 'continuous' as const, maxWindowMs: 600_000, longPollMs: 120_000 };

  it('scheduled: [position + 1 ns, now], capped by the maximum window', () => {
    const now = addMillis(T, 10_000);
    expect(planWindow(base!, now, scheduled)).toEqual({ partitionId: base!.id, epoch: 1, from: T, to: now });
    expect(planWindow(base!, addMillis(T, 3_600_000), scheduled)?.to).toBe(addMillis(T, 60_000));
    expect(planWindow(view({ position: addMillis(T, 10_000) }), addMillis(T, 10_000), scheduled)).toBeNull();
    expect(windowId({ partitionId: 'abc', from: 5n as typeof T })).toBe('abc@5');
  });

  it('continuous: long-polls past now, catches up in maximum windows', () => {
    expect(planWindow(base!, addMillis(T, 1_000), continuous)?.to).toBe(addMillis(T, 121_000));
    expect(planWindow(base!, addMillis(T, 3_600_000), continuous)?.to).toBe(addMillis(T, 600_000));
  });

  it('plans nothing for finished or failed partitions', () => {
    expect(planWindow(view({ state: 'finished' }), addMillis(T, 1), scheduled)).toBeNull();
    expect(planWindow(view({ state: 'failed' }), addMillis(T, 1), scheduled)).toBeNull();
  });
});

describe('window progress', () => {
  const window = { partitionId: 'p', epoch: 1, from: ns(10), to: ns(100) };
  const data = (n: number) =>
    ({ kind: 'data-change', commitTimestamp: ns(n) }) as unknown as Parameters<typeof observe>[1];

  it('stops only at timestamp boundaries', () => {
    let p = startWindow(window);
    p = observe(p, data(20));
    expect(p.seenThrough).toBe(ns(9)); // more records at 20 may follow
    p = observe(p, data(20));
    p = observe(p, data(30));
    expect(p).toMatchObject({ seenThrough: ns(20), open: ns(30), records: 3 });
    p = observe(p, { kind: 'heartbeat', timestamp: ns(30) });
    expect(p).toMatchObject({ seenThrough: ns(30), open: null });
  });

  it('rejects records out of order, outside the window, or after the end', () => {
    const p = observe(startWindow(window), data(30));
    expect(() => observe(p, data(20))).toThrow(/data-change record at .* is out of order/);
    expect(() => observe(startWindow(window), data(5))).toThrow(/out of order/);
    expect(() => observe(startWindow(window), data(101))).toThrow(/out of order/);
    expect(() => observe(p, { kind: 'heartbeat', timestamp: ns(25) })).toThrow(/heartbeat/);
    const child = {
      kind: 'child-partitions' as const,
      startTimestamp: ns(50),
      recordSequence: '0',
      childPartitions: [],
    };
    const ended = observe(p, child);
    expect(() => observe(ended, data(60))).toThrow(/out of order/);
    expect(observe(ended, { ...child, recordSequence: '1' }).end?.at).toBe(ns(50));
    expect(() => observe(p, { ...child, startTimestamp: ns(30) })).toThrow(/child-partitions/);
  });
});

describe('watermark, lag and garbage collection', () => {
  it('is the minimum position over unfinished partitions; not-yet-started counts as start − 1 ns', () => {
    const views = [
      view({ id: 'a', position: ns(50) }),
      view({ id: 'b', position: ns(10), state: 'finished' }),
      view({ id: 'c', position: ns(29), start: ns(30), state: 'waiting' }),
      view({ id: 'd', position: ns(1), epoch: 0 }),
    ];
    expect(watermark(views, 1)).toBe(ns(29));
    expect(watermark(views)).toBe(ns(1));
    expect(watermark([views[1]!])).toBeNull();
    expect(lagMillis(views[0]!, addMillis(ns(50), 1500))).toBe(1500);
    expect(lagMillis(views[1]!, addMillis(T, 10))).toBe(0);
    expect(lagMillis(views[0]!, T)).toBe(0);
  });

  it('removes a finished partition only when all children exist and have started', () => {
    const parent = view({ id: 'p', state: 'finished', childIds: ['c1', 'c2'] });
    const started = view({ id: 'c1', state: 'leased' });
    const notStarted = view({ id: 'c2', state: 'ready' });
    expect(isRemovable(parent, new Map([['c1', started]]))).toBe(false);
    expect(
      isRemovable(
        parent,
        new Map([
          ['c1', started],
          ['c2', notStarted],
        ]),
      ),
    ).toBe(false);
    const advanced = view({ id: 'c2', state: 'ready', position: addNanos(notStarted.start, 5n) });
    expect(
      isRemovable(
        parent,
        new Map([
          ['c1', started],
          ['c2', advanced],
        ]),
      ),
    ).toBe(true);
    expect(isRemovable(view({ state: 'leased' }), new Map())).toBe(false);
    expect(isRemovable(view({ state: 'finished', childIds: [] }), new Map())).toBe(true);
  });
});

describe('planTick', () => {
  it('sorts the listing into what to enqueue, promote, wait, remove, and what is failed, orphaned or stale', () => {
    const now = addMillis(T, 5_000);
    const plan = planTick(
      [
        view({ id: 'r2' }),
        view({ id: 'r1' }),
        view({ id: 'l1', state: 'leased', lease: { holder: 'h', expiresAt: addMillis(T, 4_000) } }),
        view({ id: 'l2', state: 'leased', lease: { holder: 'h', expiresAt: addMillis(T, 6_000) } }),
        view({ id: 'f1', state: 'finished', childIds: ['w1'], position: ns(99) }),
        view({ id: 'f2', state: 'finished', childIds: ['l2'] }),
        view({ id: 'w1', state: 'waiting', parentIds: ['f1', 'f2'] }),
        view({ id: 'w2', state: 'waiting', parentIds: ['f1', 'l1', 'gone'] }),
        view({ id: 'x1', state: 'failed', position: ns(-1) }),
        // Re-created by a stalled reader after its whole lineage was removed: not waited for.
        view({ id: 'o1', state: 'waiting', parentIds: ['gone1', 'gone2'], position: ns(-5) }),
        view({ id: 'old', epoch: 0 }),
      ],
      now,
      1,
    );
    expect(plan).toEqual({
      enqueue: ['r1', 'r2'],
      promote: ['w1'],
      expired: ['l1'],
      waiting: [{ id: 'w2', parents: ['l1', 'gone'] }],
      removable: ['f2'],
      orphaned: ['o1'],
      failed: ['x1'],
      stale: ['old'],
      watermark: ns(-1),
      lagMillis: { l1: 5000, l2: 5000, r1: 5000, r2: 5000, w1: 5000, w2: 5000, x1: 5000 },
    });
  });
});
