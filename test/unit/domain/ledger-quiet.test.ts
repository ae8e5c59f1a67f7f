/** The lease-free quiet checkpoint (ADR-1201): only forward, only on a ready partition, only its own boundary. */
import {
  acquireLease,
  boundaryOf,
  checkpointQuiet,
  entriesFromChildPartitions,
  observe,
  orThrow,
  type PartitionEntry,
  partitionId,
  startWindow,
} from '../../../shared/domain/ledger';
import { addNanos, parseTimestamp } from '../../../shared/domain/timestamp';

const T = parseTimestamp('2024-01-31T12:00:00Z');
const ns = (n: number) => addNanos(T, BigInt(n));

function root(): PartitionEntry {
  const [e] = entriesFromChildPartitions(
    {
      kind: 'child-partitions',
      startTimestamp: T,
      recordSequence: '0',
      childPartitions: [{ token: 'root', parentPartitionTokens: [] }],
    },
    3,
  );
  return e!;
}

const window = { partitionId: partitionId('root'), epoch: 3, from: T, to: ns(100) };
const heartbeatAt = (n: number, w = window) =>
  boundaryOf(observe(startWindow(w), { kind: 'heartbeat', timestamp: ns(n) }))!;

describe('checkpointQuiet', () => {
  it('moves a ready partition forward to a heartbeat boundary and counts the window', () => {
    const e = root();
    expect(e.state).toBe('ready');
    const moved = orThrow(checkpointQuiet(e, { boundary: heartbeatAt(10), writer: 'q1' }));
    expect(moved).toMatchObject({ state: 'ready', position: ns(10), writer: 'q1', lease: null });
    expect(moved.counters.windows).toBe(e.counters.windows + 1);
    expect(moved.counters.leases).toBe(e.counters.leases);
  });

  it('returns the same entry at the position (nothing to write) and refuses going back', () => {
    const moved = orThrow(checkpointQuiet(root(), { boundary: heartbeatAt(10), writer: 'q1' }));
    expect(checkpointQuiet(moved, { boundary: heartbeatAt(10), writer: 'q2' })).toEqual({
      ok: true,
      entry: moved,
    });
    expect(checkpointQuiet(moved, { boundary: heartbeatAt(5), writer: 'q3' })).toMatchObject({
      ok: false,
      refusal: 'backwards',
    });
  });

  it('refuses a leased partition (its holder owns the position) and a boundary of another partition', () => {
    const leased = orThrow(acquireLease(root(), { holder: 'h', now: T, durationMs: 1000, writer: 'a' }));
    expect(checkpointQuiet(leased, { boundary: heartbeatAt(10), writer: 'q' })).toMatchObject({
      refusal: 'wrong-state',
    });
    const other = heartbeatAt(10, { ...window, partitionId: 'f'.repeat(32) });
    expect(checkpointQuiet(root(), { boundary: other, writer: 'q' })).toMatchObject({
      refusal: 'wrong-partition',
    });
  });
});
