/**
 * A request's outcome: what became of each mutation, the per-request metrics, and the HTTP answer. 200 only
 * when every mutation was applied or routed to the failure handler; 503 (429 when Spanner asked to slow
 * down) when some are still unapplied after the retry budget — the caller retries; 422 or 500 with every
 * failed index otherwise, so the producer's queue keeps the records.
 */
import type { FlushReason } from './batching';
import { codeName, type FailureReason, type GroupStatus, type Verdict } from './policy';
import type { MutationOp } from './request';

/** Why a mutation was not applied although nothing said it never can be. */
export type UnappliedReason =
  | 'retries-exhausted'
  | 'request-deadline'
  | 'earlier-write-of-key-not-applied'
  | 'dead-letter-write-failed';

/** The end state of one mutation. */
export type MutationResult =
  | Exclude<Verdict, { kind: 'transient' }>
  | { kind: 'unapplied'; reason: UnappliedReason; status?: GroupStatus };

/** One mutation's result with what identifies it. */
export interface ResultEntry {
  index: number;
  table: string;
  op: MutationOp;
  attempts: number;
  result: MutationResult;
}

/** The per-request metrics (also logged as the `writer.request` event). */
export interface RequestMetrics {
  mutations: number;
  applied: number;
  routed: number;
  failed: number;
  unapplied: number;
  /** Group sends beyond the first. */
  mutationsRetried: number;
  /** Transient statuses and broken or failed calls seen. */
  transientErrors: number;
  /** BatchWrite calls made. */
  batches: number;
  /** Rounds of sends (the first and each retry). */
  attempts: number;
  /** Cells and estimated bytes of the largest batch sent (which limit is near shows here). */
  bufferedCells: number;
  bufferedBytes: number;
  /** Mutations written to the failure handler. */
  groupsRouted: number;
  /** How many batches each limit (or the end of the input) closed. */
  flushes: Record<FlushReason, number>;
}

/** An HTTP answer. */
export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** Counts results into the metrics' totals. */
export function tally(
  entries: ResultEntry[],
): Pick<RequestMetrics, 'applied' | 'routed' | 'failed' | 'unapplied'> {
  const n = { applied: 0, routed: 0, failed: 0, unapplied: 0 };
  for (const e of entries) n[e.result.kind]++;
  return n;
}

const DATA_REASONS: readonly FailureReason[] = ['constraint-violation', 'not-found'];

function statusCode(entries: ResultEntry[]): number {
  const failed = entries.filter((e) => e.result.kind === 'failed');
  if (failed.length)
    return failed.every((e) => e.result.kind === 'failed' && DATA_REASONS.includes(e.result.reason))
      ? 422
      : 500;
  const unapplied = entries.filter((e) => e.result.kind === 'unapplied');
  if (!unapplied.length) return 200;
  const slowDown = unapplied.some((e) => e.result.kind === 'unapplied' && e.result.status?.code === 8);
  return slowDown ? 429 : 503;
}

function describe(e: ResultEntry): Record<string, unknown> {
  const r = e.result;
  const status = r.kind === 'applied' ? undefined : r.status;
  return {
    index: e.index,
    table: e.table,
    op: e.op,
    attempts: e.attempts,
    reason: r.kind === 'applied' ? undefined : r.reason,
    ...(status ? { code: status.code, status: codeName(status.code), message: status.message } : {}),
  };
}

/** The answer for a request that was sent (400s are answered before anything is sent). */
export function answerFor(entries: ResultEntry[], metrics: RequestMetrics, deadLetter?: string): Answer {
  const body: Record<string, unknown> = { ...metrics };
  if (deadLetter) body.deadLetter = deadLetter;
  const failures = entries.filter((e) => e.result.kind === 'failed' || e.result.kind === 'unapplied');
  const routed = entries.filter((e) => e.result.kind === 'routed');
  if (failures.length) body.failures = failures.map(describe);
  if (routed.length) body.routedMutations = routed.map(describe);
  return { status: statusCode(entries), body };
}

/** The 400 answer naming every problem of a request nothing of which was written. */
export function badRequest(problems: string[], status = 400): Answer {
  const message =
    problems.length === 1 ? (problems[0] as string) : `${problems.length} problems: ${problems.join('; ')}`;
  return { status, body: { error: { code: status, message, problems } } };
}
