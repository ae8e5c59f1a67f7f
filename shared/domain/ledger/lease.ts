/**
 * Leases: time-bounded ownership of a partition by one reader invocation. Time is always passed in (never read
 * from a clock), so the functions are deterministic and a test can move time freely.
 *
 * Holder checks are made against the entry as read; the compare-and-swap write of the result is what makes
 * them safe: two invocations deciding from the same generation cannot both win.
 */
import { addMillis, maxTimestamp, type Timestamp } from '../timestamp';
import { type LastError, type Lease, type PartitionEntry, refuse, type Transition } from './entry';

/** A lease is expired at and after `expiresAt`. */
export function isLeaseExpired(lease: Lease, now: Timestamp): boolean {
  return now >= lease.expiresAt;
}

/** True when `holder` holds the entry's lease (expired or not: nobody took it over, or the write would lose). */
export function isHeldBy(entry: PartitionEntry, holder: string): boolean {
  return entry.state === 'leased' && entry.lease?.holder === holder;
}

/**
 * Takes the lease: from `ready`, or from `leased` when the lease has expired (its holder died or stalled).
 * Re-acquiring one's own lease renews it. A live lease of another holder refuses (`lease-held`): a duplicate
 * delivery of the same task finds the partition owned and does nothing.
 */
export function acquireLease(
  entry: PartitionEntry,
  args: { holder: string; now: Timestamp; durationMs: number; writer: string },
): Transition {
  const { holder, now, durationMs, writer } = args;
  if (entry.state === 'leased' && entry.lease) {
    if (entry.lease.holder === holder) return renewLease(entry, args);
    if (!isLeaseExpired(entry.lease, now)) {
      return refuse('lease-held', `partition ${entry.id} is leased by ${entry.lease.holder}`);
    }
  } else if (entry.state !== 'ready') {
    return refuse('wrong-state', `partition ${entry.id} is ${entry.state}, not ready`);
  }
  const lease = { holder, expiresAt: addMillis(now, durationMs) };
  const counters = { ...entry.counters, leases: entry.counters.leases + 1 };
  return { ok: true, entry: { ...entry, state: 'leased', lease, counters, writer } };
}

/** Extends the holder's lease to `now + durationMs` (never shortens it). */
export function renewLease(
  entry: PartitionEntry,
  args: { holder: string; now: Timestamp; durationMs: number; writer: string },
): Transition {
  if (!isHeldBy(entry, args.holder) || !entry.lease) {
    return refuse('not-holder', `partition ${entry.id} is not leased by ${args.holder}`);
  }
  const proposed = addMillis(args.now, args.durationMs);
  const expiresAt = maxTimestamp(proposed, entry.lease.expiresAt);
  return { ok: true, entry: { ...entry, lease: { holder: args.holder, expiresAt }, writer: args.writer } };
}

/**
 * Gives the partition back (`leased` → `ready`) after a window, counting it; with `error`, records a
 * retryable failure so the status page shows it while the next attempt runs.
 */
export function releaseLease(
  entry: PartitionEntry,
  args: {
    holder: string;
    writer: string;
    windowDone?: boolean;
    error?: LastError;
  },
): Transition {
  if (!isHeldBy(entry, args.holder)) {
    return refuse('not-holder', `partition ${entry.id} is not leased by ${args.holder}`);
  }
  const counters = {
    ...entry.counters,
    windows: entry.counters.windows + ((args.windowDone ?? !args.error) ? 1 : 0),
    errors: entry.counters.errors + (args.error ? 1 : 0),
  };
  const lastError = args.error ?? entry.lastError;
  // A failed attempt counts; a window that completed clears the count (ADR-1501).
  const failures = args.error ? entry.failures + 1 : 0;
  return {
    ok: true,
    entry: { ...entry, state: 'ready', lease: null, counters, lastError, failures, writer: args.writer },
  };
}
