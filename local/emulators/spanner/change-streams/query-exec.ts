/**
 * Execution of change-stream queries as async generators of rows. Time-dependent behaviour follows real
 * time through the injected clock: a start or end in the future waits for it, quiet partitions get heartbeats
 * at the requested interval, and a partition that ends within the window ends the query with its
 * child-partitions record. The loop wakes on every commit or churn and at least every POLL_MS.
 */
import type { ChangeRow } from './model';
import { sequenceString } from './model';
import { firstRecordAtOrAfter, type Partition, type PartitionSet } from './partitions';
import { waitFor } from './time';

/** How often a waiting query re-checks the clock when nothing wakes it. */
export const POLL_MS = 20;

/** What a running query needs from the engine. */
export interface ExecEnv {
  now: () => bigint;
  /** Subscribes to "something changed" (commit, churn, DDL); returns the unsubscribe function. */
  onChange: (listener: () => void) => () => void;
  signal: AbortSignal;
  /** Throws when the stream is gone (dropped). */
  checkAlive: () => void;
}

function untilMs(env: ExecEnv, targetNs: bigint): number {
  const ms = Number((targetNs - env.now()) / 1_000_000n);
  return Math.max(1, Math.min(POLL_MS, ms));
}

/** The initial query: one child-partitions record per partition alive at `startNs`, then the end. */
export async function* initialQuery(
  startNs: bigint,
  partitions: PartitionSet,
  env: ExecEnv,
): AsyncGenerator<ChangeRow> {
  while (env.now() < startNs) {
    if (env.signal.aborted) return;
    await waitFor(untilMs(env, startNs), env.onChange, env.signal);
  }
  env.checkAlive();
  let seq = 0;
  for (const p of partitions.activeAt(startNs)) {
    yield {
      kind: 'child',
      startTimestampNs: startNs,
      recordSequence: sequenceString(seq++),
      children: [{ token: p.token, parentPartitionTokens: [] }],
    };
  }
}

/** A partition query's window and heartbeat interval. */
export interface PartitionWindow {
  partition: Partition;
  partitions: PartitionSet;
  startNs: bigint;
  endNs: bigint | null;
  heartbeatMs: number;
}

/** The highest timestamp whose records are all known now: min(now, end, partition end − 1). */
function horizonOf(w: PartitionWindow, nowNs: bigint): bigint {
  let h = nowNs;
  if (w.endNs !== null && w.endNs < h) h = w.endNs;
  const pEnd = w.partition.endNs;
  if (pEnd !== null && pEnd - 1n < h) h = pEnd - 1n;
  return h;
}

/** A partition query: records in order, heartbeats when quiet, child-partitions record when it ends. */
export async function* partitionQuery(w: PartitionWindow, env: ExecEnv): AsyncGenerator<ChangeRow> {
  let cursor = w.startNs;
  let lastRowMs = Date.now();
  let lastRowTs = w.startNs - 1n;
  let sent = 0;
  for (;;) {
    if (env.signal.aborted) return;
    env.checkAlive();
    const horizon = horizonOf(w, env.now());
    if (horizon >= cursor) {
      const records = w.partition.records;
      for (let i = firstRecordAtOrAfter(records, cursor); i < records.length; i++) {
        const record = records[i];
        if (!record || record.commitTimestampNs > horizon) break;
        yield { kind: 'data', record };
        sent++;
        lastRowMs = Date.now();
        lastRowTs = record.commitTimestampNs;
      }
      cursor = horizon + 1n;
    }
    const pEnd = w.partition.endNs;
    if (pEnd !== null && pEnd <= cursor && (w.endNs === null || pEnd <= w.endNs)) {
      const children = w.partitions.childrenOf(w.partition);
      const groups = w.partition.childRecordEach ? children.map((c) => [c]) : [children];
      for (const [i, group] of groups.entries()) {
        yield { kind: 'child', startTimestampNs: pEnd, recordSequence: sequenceString(i), children: group };
      }
      return;
    }
    if (w.endNs !== null && cursor > w.endNs) {
      // A bounded query always returns at least one row.
      if (sent === 0) yield { kind: 'heartbeat', timestampNs: w.endNs };
      return;
    }
    // A heartbeat at cursor − 1 promises that every record ≤ it was sent; it never equals a record's timestamp.
    if (Date.now() - lastRowMs >= w.heartbeatMs && cursor - 1n > lastRowTs) {
      yield { kind: 'heartbeat', timestampNs: cursor - 1n };
      sent++;
      lastRowMs = Date.now();
      lastRowTs = cursor - 1n;
    }
    const heartbeatDue = Math.max(1, w.heartbeatMs - (Date.now() - lastRowMs));
    await waitFor(Math.min(POLL_MS, heartbeatDue), env.onChange, env.signal);
  }
}
