/**
 * The lease-free start of a scheduled window (ADR-1201). A caught-up quiet partition sees only heartbeats, and
 * taking and releasing a lease for that costs two ledger writes (GCS class A) per window — the dominant idle
 * cost. So a window starts from the entry as read (class B) and runs its query without a lease:
 *
 * - the first record that is not a heartbeat (data, or the partition's end) makes the window *active*: the
 *   lease is taken with compare-and-swap on the generation the window was planned from — a lost race means
 *   another reader progressed, and this one abandons — and the records seen so far are replayed, ahead of the
 *   rest of the same query, to the ordinary leased window; nothing reaches a sink before the lease is held;
 * - a window that ends seeing only heartbeats is *quiet*: it writes nothing, unless the position is older than
 *   the quiet-checkpoint interval, and then one compare-and-swap write moves the position (still no lease).
 */
import type { ChangeRecord } from '../../../domain/change-record';
import {
  acquireLease,
  type Boundary,
  boundaryOf,
  completeWindow,
  observe,
  type PartitionEntry,
  startWindow,
  type Window,
} from '../../../domain/ledger';
import type { ChangeQuery, ChangeSource } from '../../../ports/change-source';
import type { Runtime } from '../../common';
import { type LedgerStore, newWriterToken, type Versioned } from '../../ledger';

/** How a lease-free window start came out. */
export type QuietOutcome =
  /** Only heartbeats up to the window's end; `boundary` is how far they closed the partition. */
  | { kind: 'quiet'; boundary: Boundary | null }
  /** A record worth the lease arrived and the lease is ours: run the window on `source` (same query). */
  | { kind: 'active'; entry: PartitionEntry; source: ChangeSource }
  /** The lease could not be taken from the generation read: someone else moved the partition. */
  | { kind: 'lost'; reason: string };

/** What the lease-free start needs. */
export interface QuietContext {
  ledger: LedgerStore;
  source: ChangeSource;
  runtime: Runtime;
  holder: string;
  leaseMs: number;
  heartbeatMs: number;
}

/** Runs `window` of the entry read at `current` without a lease until it proves quiet or needs the lease. */
export async function startQuietWindow(
  ctx: QuietContext,
  current: Versioned<PartitionEntry>,
  window: Window,
): Promise<QuietOutcome> {
  const entry = current.value;
  const query: ChangeQuery = {
    partitionToken: entry.token,
    from: window.from,
    to: window.to,
    heartbeatMs: ctx.heartbeatMs,
  };
  const records = ctx.source.read(query)[Symbol.asyncIterator]();
  const seen: ChangeRecord[] = [];
  let progress = startWindow(window);
  try {
    for (;;) {
      const next = await records.next();
      if (next.done) return { kind: 'quiet', boundary: boundaryOf(completeWindow(progress)) };
      seen.push(next.value);
      progress = observe(progress, next.value);
      if (next.value.kind === 'heartbeat') continue;
      const leased = await takeLease(ctx, current);
      if (typeof leased === 'string') {
        await records.return?.();
        return { kind: 'lost', reason: leased };
      }
      return { kind: 'active', entry: leased, source: replaying(query, seen, records) };
    }
  } catch (err) {
    // Cancel the query before the failure is reported (no lease is held: nothing to give back).
    await records.return?.().catch(() => undefined);
    throw err;
  }
}

/** Takes the lease from exactly the generation the window was planned from; a string says why not. */
async function takeLease(
  ctx: QuietContext,
  current: Versioned<PartitionEntry>,
): Promise<PartitionEntry | string> {
  const t = acquireLease(current.value, {
    holder: ctx.holder,
    now: ctx.runtime.now(),
    durationMs: ctx.leaseMs,
    writer: newWriterToken(),
  });
  if (!t.ok) return t.message;
  const generation = await ctx.ledger.writePartition(t.entry, current.generation);
  return generation ? t.entry : `partition ${current.value.id} changed while its window was read`;
}

/**
 * A source that answers the one query already under way: the records seen so far, then the rest of the same
 * stream. Any other query is refused — the window must read exactly what it was planned to.
 */
function replaying(
  query: ChangeQuery,
  seen: readonly ChangeRecord[],
  rest: AsyncIterator<ChangeRecord>,
): ChangeSource {
  let used = false;
  return {
    read(q: ChangeQuery): AsyncIterable<ChangeRecord> {
      if (used || q.partitionToken !== query.partitionToken || q.from !== query.from || q.to !== query.to) {
        throw new Error('a replayed window answers only its own query, once');
      }
      used = true;
      return (async function* () {
        yield* seen;
        try {
          for (;;) {
            const next = await rest.next();
            if (next.done) return;
            yield next.value;
          }
        } finally {
          await rest.return?.();
        }
      })();
    },
  };
}
