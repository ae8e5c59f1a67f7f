import type { ChildPartitionsRecord } from '../../../shared/domain/change-record';
import {
  acquireLease,
  advancePosition,
  boundaryOf,
  CREATE_WRITER,
  completeWindow,
  entriesFromChildPartitions,
  failPartition,
  finishPartition,
  isOwnWrite,
  isReadyToRead,
  markReady,
  observe,
  orThrow,
  type PartitionEntry,
  partitionEndOf,
  partitionId,
  releaseLease,
  renewLease,
  retryFailed,
  serializeEntry,
  startWindow,
} from '../../../shared/domain/ledger';
import { addMillis, addNanos, parseTimestamp } from '../../../shared/domain/timestamp';

const T = parseTimestamp('2024-01-31T12:00:00Z');
const ns = (n: number) => addNanos(T, BigInt(n));

/** The documentation's merge example: child_token_4 reported by both of its parents. */
const merge: ChildPartitionsRecord = {
  kind: 'child-partitions',
  startTimestamp: ns(1000),
  recordSequence: '00000000',
  childPartitions: [{ token: 'child_token_4', parentPartitionTokens: ['child_token_3', 'child_token_2'] }],
};

function root(token = 'root'): PartitionEntry {
  const [e] = entriesFromChildPartitions(
    {
      kind: 'child-partitions',
      startTimestamp: T,
      recordSequence: '0',
      childPartitions: [{ token, parentPartitionTokens: [] }],
    },
    3,
  );
  return e!;
}

const lease = (e: PartitionEntry, holder = 'h1', at = T) =>
  orThrow(acquireLease(e, { holder, now: at, durationMs: 1000, writer: `${holder}-acq` }));

describe('creating entries from child-partitions records', () => {
  it('derives the same bytes from the same record, whichever parent reports it (merge)', () => {
    const fromParent2 = entriesFromChildPartitions(merge, 1);
    const fromParent3 = entriesFromChildPartitions(
      {
        ...merge,
        recordSequence: '00000007',
        childPartitions: [
          {
            token: 'child_token_4',
            parentPartitionTokens: ['child_token_2', 'child_token_3', 'child_token_2'],
          },
        ],
      },
      1,
    );
    expect(fromParent2.map(serializeEntry)).toEqual(fromParent3.map(serializeEntry));
    expect(fromParent2[0]).toMatchObject({
      id: partitionId('child_token_4'),
      state: 'waiting',
      start: ns(1000),
      position: ns(999),
      parentTokens: ['child_token_2', 'child_token_3'],
      parentIds: [partitionId('child_token_2'), partitionId('child_token_3')],
      writer: CREATE_WRITER,
    });
  });

  it('makes the initial partitions ready and drops duplicate tokens', () => {
    const entries = entriesFromChildPartitions(
      {
        kind: 'child-partitions',
        startTimestamp: T,
        recordSequence: '0',
        childPartitions: [
          { token: 'a', parentPartitionTokens: [''] },
          { token: 'b', parentPartitionTokens: [] },
          { token: 'a', parentPartitionTokens: [] },
        ],
      },
      0,
    );
    expect(entries.map((e) => [e.token, e.state])).toEqual([
      ['a', 'ready'],
      ['b', 'ready'],
    ]);
    expect(partitionId('a')).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('readiness', () => {
  const [child] = entriesFromChildPartitions(merge, 1);
  const finished = (token: string) => ({ ...root(token), state: 'finished' as const });

  it('waits until every parent is finished', () => {
    expect(isReadyToRead(child!, [finished('child_token_2')])).toBe(false);
    const refused = markReady(
      child!,
      [finished('child_token_2'), { ...finished('child_token_3'), state: 'leased' }],
      'w',
    );
    expect(refused).toMatchObject({ ok: false, refusal: 'parents-unfinished' });
    const ready = orThrow(
      markReady(child!, [finished('child_token_2'), finished('child_token_3'), finished('x')], 'w'),
    );
    expect(ready).toMatchObject({ state: 'ready', writer: 'w' });
    expect(markReady(ready, [], 'w2')).toMatchObject({ ok: false, refusal: 'wrong-state' });
    expect(() => orThrow(markReady(ready, [], 'w2'))).toThrow(/wrong-state/);
  });
});

describe('leases', () => {
  it('grants a ready partition, refuses a live lease of another holder, allows takeover after expiry', () => {
    const held = lease(root());
    expect(held).toMatchObject({ state: 'leased', lease: { holder: 'h1', expiresAt: addMillis(T, 1000) } });
    expect(held.counters.leases).toBe(1);
    expect(
      acquireLease(held, { holder: 'h2', now: addMillis(T, 999), durationMs: 1000, writer: 'x' }),
    ).toMatchObject({
      ok: false,
      refusal: 'lease-held',
    });
    const taken = lease(held, 'h2', addMillis(T, 1000));
    expect(taken.lease?.holder).toBe('h2');
    expect(taken.counters.leases).toBe(2);
    expect(isOwnWrite(taken, 'h2-acq')).toBe(true);
    expect(isOwnWrite(taken, 'h1-acq')).toBe(false);
  });

  it('renews (never shortening) only for the holder; re-acquiring one’s own lease renews', () => {
    const held = lease(root());
    const renewed = orThrow(
      renewLease(held, { holder: 'h1', now: addMillis(T, 500), durationMs: 1000, writer: 'r' }),
    );
    expect(renewed.lease?.expiresAt).toBe(addMillis(T, 1500));
    const notShorter = orThrow(renewLease(renewed, { holder: 'h1', now: T, durationMs: 10, writer: 'r2' }));
    expect(notShorter.lease?.expiresAt).toBe(addMillis(T, 1500));
    expect(renewLease(held, { holder: 'h2', now: T, durationMs: 1, writer: 'x' })).toMatchObject({
      refusal: 'not-holder',
    });
    expect(lease(held, 'h1', addMillis(T, 100)).lease?.expiresAt).toBe(addMillis(T, 1100));
    expect(lease(held, 'h1', addMillis(T, 100)).counters.leases).toBe(1);
  });

  it('refuses waiting, finished and failed partitions', () => {
    const [waiting] = entriesFromChildPartitions(merge, 1);
    expect(acquireLease(waiting!, { holder: 'h', now: T, durationMs: 1, writer: 'w' })).toMatchObject({
      refusal: 'wrong-state',
    });
  });

  it('releases with the window counted, or records a retryable error', () => {
    const held = lease(root());
    const released = orThrow(releaseLease(held, { holder: 'h1', writer: 'rel' }));
    expect(released).toMatchObject({ state: 'ready', lease: null, counters: { windows: 1, errors: 0 } });
    const error = { kind: 'retryable' as const, message: 'UNAVAILABLE', at: T };
    const failed = orThrow(releaseLease(held, { holder: 'h1', writer: 'rel', error }));
    expect(failed).toMatchObject({ state: 'ready', lastError: error, counters: { windows: 0, errors: 1 } });
    expect(releaseLease(released, { holder: 'h1', writer: 'x' })).toMatchObject({ refusal: 'not-holder' });
  });
});

describe('advancing and finishing', () => {
  const window = { partitionId: partitionId('root'), epoch: 3, from: T, to: ns(100) };

  it('advances only forward, only for the holder, only with a boundary of this partition', () => {
    const held = lease(root());
    let p = startWindow(window);
    expect(boundaryOf(p)).toBeNull();
    p = observe(p, { kind: 'heartbeat', timestamp: ns(10) });
    const boundary = boundaryOf(p)!;
    const moved = orThrow(advancePosition(held, { holder: 'h1', boundary, writer: 'adv', records: 4 }));
    expect(moved).toMatchObject({ position: ns(10), writer: 'adv', counters: { records: 4 } });
    expect(advancePosition(moved, { holder: 'h1', boundary, writer: 'again' })).toEqual({
      ok: true,
      entry: moved,
    });
    const back = boundaryOf(observe(startWindow(window), { kind: 'heartbeat', timestamp: ns(5) }))!;
    expect(advancePosition(moved, { holder: 'h1', boundary: back, writer: 'b' })).toMatchObject({
      refusal: 'backwards',
    });
    expect(advancePosition(moved, { holder: 'h2', boundary, writer: 'b' })).toMatchObject({
      refusal: 'not-holder',
    });
    const other = boundaryOf(
      observe(startWindow({ ...window, partitionId: 'f'.repeat(32) }), {
        kind: 'heartbeat',
        timestamp: ns(20),
      }),
    )!;
    expect(advancePosition(moved, { holder: 'h1', boundary: other, writer: 'b' })).toMatchObject({
      refusal: 'wrong-partition',
    });
  });

  it('finishes at a child-partitions record at the window boundary: children start there, nothing is lost', () => {
    const held = lease(root());
    const record: ChildPartitionsRecord = {
      kind: 'child-partitions',
      startTimestamp: window.to,
      recordSequence: '0',
      childPartitions: [
        { token: 'c1', parentPartitionTokens: ['root'] },
        { token: 'c2', parentPartitionTokens: ['root'] },
      ],
    };
    let p = startWindow(window);
    p = observe(p, { kind: 'heartbeat', timestamp: ns(40) });
    p = observe(p, record);
    p = completeWindow(p);
    expect(boundaryOf(p)?.at).toBe(ns(99));
    const done = orThrow(finishPartition(held, { holder: 'h1', end: p.end!, writer: 'fin' }));
    expect(done).toMatchObject({
      state: 'finished',
      position: ns(99),
      end: window.to,
      lease: null,
      childTokens: ['c1', 'c2'],
      childIds: [partitionId('c1'), partitionId('c2')],
    });
    const children = entriesFromChildPartitions(record, done.epoch);
    expect(children.map((c) => c.position)).toEqual([ns(99), ns(99)]);
    // The children's first window starts exactly at the parent's end.
    expect(children.every((c) => addNanos(c.position, 1n) === done.end)).toBe(true);
  });

  it('refuses an end before the position, and non-holders', () => {
    const moved = { ...lease(root()), position: ns(50) };
    expect(
      finishPartition(moved, { holder: 'h1', end: { at: ns(40), children: [] }, writer: 'f' }),
    ).toMatchObject({
      refusal: 'bad-record',
    });
    expect(
      finishPartition(moved, { holder: 'h9', end: { at: ns(60), children: [] }, writer: 'f' }),
    ).toMatchObject({
      refusal: 'not-holder',
    });
    const atPosition = orThrow(
      finishPartition(moved, { holder: 'h1', end: { at: ns(50), children: [] }, writer: 'f' }),
    );
    expect(atPosition.position).toBe(ns(50));
  });

  it('merges several child-partitions records of one end', () => {
    const a: ChildPartitionsRecord = {
      ...merge,
      childPartitions: [{ token: 'x', parentPartitionTokens: ['p'] }],
    };
    const b: ChildPartitionsRecord = {
      ...merge,
      recordSequence: '1',
      childPartitions: [{ token: 'y', parentPartitionTokens: ['p'] }],
    };
    expect(partitionEndOf([a, b])).toEqual({
      at: merge.startTimestamp,
      children: [...a.childPartitions, ...b.childPartitions],
    });
    expect(partitionEndOf([])).toBeNull();
    expect(partitionEndOf([a, { ...b, startTimestamp: ns(1) }])).toBeNull();
  });

  it('fails permanently and lets an operator retry', () => {
    const error = { kind: 'permanent' as const, message: 'OUT_OF_RANGE: too far in the past', at: T };
    const failed = orThrow(failPartition(lease(root()), { holder: 'h1', error, writer: 'f' }));
    expect(failed).toMatchObject({ state: 'failed', lease: null, lastError: error, counters: { errors: 1 } });
    expect(failPartition(failed, { holder: 'h1', error, writer: 'f' })).toMatchObject({
      refusal: 'not-holder',
    });
    expect(orThrow(retryFailed(failed, 'op')).state).toBe('ready');
    expect(retryFailed(root(), 'op')).toMatchObject({ refusal: 'wrong-state' });
  });
});
