/**
 * The writer's retry loop over a request's typed mutations. Each round batches the groups still open,
 * sends the batches (a few calls at once) and reads each group's status: applied, routed and failed groups
 * are done; a group that failed transiently, or got no status because its call broke or failed
 * transiently, stays open and is re-sent next round — a group confirmed applied never is. Rounds after a
 * transient failure wait a jittered backoff. A group is given up after `maxAttempts` sends. The request's
 * deadline bounds everything: each attempt's timeout is cut to the time left, a batch whose turn comes too
 * close to the deadline is not sent (its groups are answered `request-deadline`), and backoff ends at it.
 * With per-key ordering, a write of a row is only sent once every earlier write of that row in the request
 * has its final status.
 */
import { GrpcCode } from '../../domain/errors';
import { type Batch, type BatchLimits, toBatches } from '../../domain/writer/batching';
import type { Ordering } from '../../domain/writer/config';
import type { TypedMutation } from '../../domain/writer/mutations';
import type { MutationResult, RequestMetrics, ResultEntry } from '../../domain/writer/outcome';
import {
  attemptTimeoutMs,
  backoffMs,
  type ConstraintViolationPolicy,
  classifyCallFailure,
  classifyGroupStatus,
  type GroupStatus,
  type RetrySettings,
  type Verdict,
} from '../../domain/writer/policy';
import type { BatchWriteResult, MutationSink } from '../../ports/mutation-sink';

/** What the loop needs. */
export interface SendSettings {
  sink: MutationSink;
  limits: BatchLimits;
  retry: RetrySettings;
  concurrency: number;
  ordering: Ordering;
  policy: ConstraintViolationPolicy;
  /** Milliseconds clock and the time (on it) by which the request must be answered. */
  nowMs: () => number;
  deadlineMs: number;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  tag: string;
}

type Metrics = Omit<
  RequestMetrics,
  'mutations' | 'applied' | 'routed' | 'failed' | 'unapplied' | 'groupsRouted'
>;

interface Group {
  m: TypedMutation;
  attempts: number;
  last?: GroupStatus;
  done?: MutationResult;
}

const NO_STATUS: GroupStatus = { code: GrpcCode.UNKNOWN, message: 'no status reported for the group' };

/** Runs `fn` over `items` with at most `n` in flight. */
async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}

/** The groups to send this round; with per-key ordering, the first open write of each row only. */
function eligible(groups: Group[], ordering: Ordering): Group[] {
  const open = groups.filter((g) => !g.done);
  if (ordering === 'none') return open;
  const blocked = new Set<string>();
  const out: Group[] = [];
  for (const g of groups) {
    const key = g.m.rowKey;
    if (!g.done && !blocked.has(key)) out.push(g);
    if (!g.done || g.done.kind === 'failed' || g.done.kind === 'unapplied') blocked.add(key);
  }
  return out;
}

/** Later writes of a row whose earlier write ended unapplied or failed are not sent (order would break). */
function skipAfterFailures(groups: Group[], ordering: Ordering): void {
  if (ordering === 'none') return;
  const failed = new Map<string, GroupStatus | undefined>();
  for (const g of groups) {
    const prior = failed.get(g.m.rowKey);
    if (!g.done && failed.has(g.m.rowKey))
      g.done = {
        kind: 'unapplied',
        reason: 'earlier-write-of-key-not-applied',
        ...(prior ? { status: prior } : {}),
      };
    if (g.done?.kind === 'failed' || g.done?.kind === 'unapplied') failed.set(g.m.rowKey, g.done.status);
  }
}

/** Records a group's verdict; `counted` tells whether a transient one is a new transient error. */
function settle(g: Group, v: Verdict, s: SendSettings, metrics: Metrics, counted: boolean): void {
  g.attempts++;
  if (v.kind !== 'transient') {
    g.done = v;
    return;
  }
  if (counted) metrics.transientErrors++;
  g.last = v.status;
  if (g.attempts >= s.retry.maxAttempts)
    g.done = { kind: 'unapplied', reason: 'retries-exhausted', status: v.status };
}

function readResult(batch: Group[], result: BatchWriteResult, s: SendSettings, metrics: Metrics): void {
  const reported = new Map(result.reports.map((r) => [r.position, r]));
  // Groups without a status: the call's failure decides (re-send if transient); a stream that ended
  // without one for a group is treated as broken.
  const unreported: Verdict = result.callError
    ? classifyCallFailure(result.callError)
    : { kind: 'transient', status: NO_STATUS };
  if (unreported.kind === 'transient' && reported.size < batch.length) metrics.transientErrors++;
  batch.forEach((g, position) => {
    const report = reported.get(position);
    if (report) settle(g, classifyGroupStatus(report.status, s.policy), s, metrics, true);
    else settle(g, unreported, s, metrics, false);
  });
}

async function sendRound(groups: Group[], s: SendSettings, metrics: Metrics): Promise<void> {
  const byMutation = new Map(groups.map((g) => [g.m, g]));
  const batches: Batch[] = toBatches(
    groups.map((g) => g.m),
    s.limits,
  );
  await pool(batches, s.concurrency, async (b) => {
    const members = b.mutations.map((m) => byMutation.get(m) as Group);
    // Checked when the batch's turn comes, not when the round starts: a round of more batches than the
    // concurrency runs in waves, and a later wave must not outlast the deadline either.
    const timeoutMs = attemptTimeoutMs(s.deadlineMs - s.nowMs(), s.retry);
    if (timeoutMs === undefined) return giveUp(members);
    metrics.batches++;
    metrics.flushes[b.reason]++;
    metrics.bufferedCells = Math.max(metrics.bufferedCells, b.cells);
    metrics.bufferedBytes = Math.max(metrics.bufferedBytes, b.bytes);
    let result: BatchWriteResult;
    try {
      result = await s.sink.batchWrite(b.mutations, { timeoutMs, tag: s.tag });
    } catch (err) {
      return failBatch(members, err, s, metrics);
    }
    readResult(members, result, s, metrics);
  });
}

/**
 * A batch whose call threw (a sink throws only for what Spanner did not answer — a value it could not
 * convert, a bug): its groups fail, named, and the other batches of the request keep their results, so the
 * answer still has every mutation's result and the routed ones their dead letter. Its groups may have been
 * partly sent, so they are failed (the producer resends) rather than retried blindly.
 */
function failBatch(members: Group[], err: unknown, s: SendSettings, metrics: Metrics): void {
  const reason = err instanceof Error ? err.message : String(err);
  const status = { code: GrpcCode.INTERNAL, message: `BatchWrite could not be sent: ${reason}` };
  for (const g of members) settle(g, { kind: 'failed', status, reason: 'other' }, s, metrics, false);
}

/** Groups left open at the request deadline: unapplied, with the last transient status they had. */
function giveUp(groups: Group[]): void {
  for (const g of groups)
    if (!g.done)
      g.done = { kind: 'unapplied', reason: 'request-deadline', ...(g.last ? { status: g.last } : {}) };
}

/** Sends every mutation until each has its final result or the budget is spent. */
export async function sendAll(
  mutations: TypedMutation[],
  s: SendSettings,
): Promise<{ entries: ResultEntry[]; metrics: Metrics }> {
  const metrics: Metrics = {
    mutationsRetried: 0,
    transientErrors: 0,
    batches: 0,
    attempts: 0,
    bufferedCells: 0,
    bufferedBytes: 0,
    flushes: { cells: 0, mutations: 0, bytes: 0, end: 0 },
  };
  const groups: Group[] = mutations.map((m) => ({ m, attempts: 0 }));
  let retries = 0;
  for (;;) {
    skipAfterFailures(groups, s.ordering);
    const round = eligible(groups, s.ordering);
    if (round.length === 0) break;
    const before = metrics.transientErrors;
    metrics.attempts++;
    await sendRound(round, s, metrics);
    if (metrics.transientErrors > before && groups.some((g) => !g.done))
      await s.sleep(Math.max(0, Math.min(backoffMs(++retries, s.retry, s.random), s.deadlineMs - s.nowMs())));
  }
  metrics.mutationsRetried = groups.reduce((n, g) => n + Math.max(0, g.attempts - 1), 0);
  const entries = groups.map((g) => ({
    index: g.m.index,
    table: g.m.table,
    op: g.m.op,
    attempts: g.attempts,
    result: g.done as MutationResult,
  }));
  return { entries, metrics };
}
