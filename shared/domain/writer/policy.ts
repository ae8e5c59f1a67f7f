/**
 * What the writer does with each status Spanner reports for a mutation group, and how it retries. The
 * client library does not retry BatchWrite, so the writer owns the loop: ABORTED, UNAVAILABLE,
 * DEADLINE_EXCEEDED and RESOURCE_EXHAUSTED are retried within a budget; everything else is final. Final
 * failures either go to the failure handler (a dead letter, counted as handled) or fail the request so the
 * producer's queue keeps the record — the choice per code is explained in docs/writer.md.
 */
import { GrpcCode, type GrpcCodeName } from '../errors';

/** Statuses worth retrying (the same request may succeed later). */
export const TRANSIENT_CODES: readonly number[] = [
  GrpcCode.ABORTED,
  GrpcCode.UNAVAILABLE,
  GrpcCode.DEADLINE_EXCEEDED,
  GrpcCode.RESOURCE_EXHAUSTED,
];

/** Whether schema violations are dead-lettered (opt-in) or fail the request (default). */
export type ConstraintViolationPolicy = 'fail' | 'route-to-failure-handler';

/** Why a group did not apply. */
export type FailureReason =
  | 'already-exists'
  | 'invalid-argument'
  | 'constraint-violation'
  | 'failed-precondition'
  | 'not-found'
  | 'request-rejected'
  | 'other';

/** A status as Spanner reports it. */
export interface GroupStatus {
  code: number;
  message: string;
}

/** The decision for one group. */
export type Verdict =
  | { kind: 'applied' }
  | { kind: 'transient'; status: GroupStatus }
  | { kind: 'routed' | 'failed'; status: GroupStatus; reason: FailureReason };

/** Name of a gRPC code, e.g. `ALREADY_EXISTS` (`CODE_<n>` for unknown numbers). */
export function codeName(code: number): string {
  const entry = Object.entries(GrpcCode).find(([, v]) => v === code);
  return entry ? (entry[0] as GrpcCodeName) : `CODE_${code}`;
}

const CONSTRAINT_MESSAGES = [
  /null value for column|non-null value for NOT NULL column|must not be NULL/i,
  /exceeds the maximum size limit/i,
  /foreign key/i,
  /check constraint/i,
];

/**
 * A schema violation (NOT NULL, over-long value, FOREIGN KEY, CHECK): Spanner reports them as
 * FAILED_PRECONDITION (CHECK as OUT_OF_RANGE); the message tells them from FAILED_PRECONDITION caused by system
 * state (e.g. a disabled CMEK key), which must never be routed.
 */
export function isConstraintViolation(s: GroupStatus): boolean {
  const codes: number[] = [GrpcCode.FAILED_PRECONDITION, GrpcCode.OUT_OF_RANGE, GrpcCode.INVALID_ARGUMENT];
  return codes.includes(s.code) && CONSTRAINT_MESSAGES.some((re) => re.test(s.message));
}

/** A status saying the writer's schema is stale (a table or column gone, a type changed). */
export function isSchemaMiss(s: GroupStatus): boolean {
  return (
    (s.code === GrpcCode.NOT_FOUND && /^(Table|Column) not found/i.test(s.message)) ||
    /type mismatch|Invalid value for column/i.test(s.message)
  );
}

function final(kind: 'routed' | 'failed', status: GroupStatus, reason: FailureReason): Verdict {
  return { kind, status, reason };
}

/** Decides what a group's status means. */
export function classifyGroupStatus(status: GroupStatus, policy: ConstraintViolationPolicy): Verdict {
  if (status.code === GrpcCode.OK) return { kind: 'applied' };
  if (TRANSIENT_CODES.includes(status.code)) return { kind: 'transient', status };
  if (isConstraintViolation(status))
    return final(policy === 'route-to-failure-handler' ? 'routed' : 'failed', status, 'constraint-violation');
  switch (status.code) {
    case GrpcCode.ALREADY_EXISTS:
      return final('routed', status, 'already-exists');
    case GrpcCode.INVALID_ARGUMENT:
      return final('routed', status, 'invalid-argument');
    case GrpcCode.FAILED_PRECONDITION:
      return final('failed', status, 'failed-precondition');
    case GrpcCode.NOT_FOUND:
      return final('failed', status, 'not-found');
    default:
      return final('failed', status, 'other');
  }
}

/**
 * A request refused for its size: the service says INVALID_ARGUMENT over 100 MiB, but a gRPC receive limit on
 * the way (a server's or the client's) says RESOURCE_EXHAUSTED — which must not be retried: the same bytes
 * are refused again every time.
 */
function isTooLarge(s: GroupStatus): boolean {
  return /Received message larger than max|Request payload size exceeds the limit/i.test(s.message);
}

/**
 * The verdict for a group that got no status because the call itself failed: a transient failure re-sends
 * it; any other says nothing about this record (a request-level rejection), so it fails and is never routed.
 */
export function classifyCallFailure(status: GroupStatus): Verdict {
  if (isTooLarge(status)) return final('failed', status, 'request-rejected');
  if (TRANSIENT_CODES.includes(status.code)) return { kind: 'transient', status };
  return final('failed', status, 'request-rejected');
}

/** How the writer retries. */
export interface RetrySettings {
  /** Sends of one group in all, the first included. */
  maxAttempts: number;
  /** Bound of one BatchWrite call. */
  batchWriteTimeoutMs: number;
  /** Backoff before the first retry; doubled each retry, capped by `backoffMaxMs`. */
  backoffInitialMs: number;
  backoffMaxMs: number;
}

/** The defaults. */
export const DEFAULT_RETRY: RetrySettings = {
  maxAttempts: 10,
  batchWriteTimeoutMs: 30_000,
  backoffInitialMs: 500,
  backoffMaxMs: 10_000,
};

/** No attempt starts with less than this left before the request deadline (or its timeout, if smaller). */
export const MIN_ATTEMPT_MS = 1_000;

/**
 * The timeout of an attempt started `remainingMs` before the request deadline: the attempt timeout, cut to
 * the time left so that no attempt outlasts the deadline; `undefined` when too little is left to start one.
 */
export function attemptTimeoutMs(remainingMs: number, s: RetrySettings): number | undefined {
  if (remainingMs < Math.min(MIN_ATTEMPT_MS, s.batchWriteTimeoutMs)) return undefined;
  return Math.min(s.batchWriteTimeoutMs, remainingMs);
}

/** The nominal (longest) backoff before retry `n` (1-based). */
export function nominalBackoffMs(n: number, s: RetrySettings): number {
  return Math.min(s.backoffInitialMs * 2 ** (n - 1), s.backoffMaxMs);
}

/**
 * The backoff before retry `n`: the nominal delay jittered down to between half and all of it, so writers
 * retrying together spread out and the worst case stays the nominal sum.
 */
export function backoffMs(n: number, s: RetrySettings, random: () => number = Math.random): number {
  return nominalBackoffMs(n, s) * (0.5 + random() / 2);
}

/** The longest a group can take: every attempt timing out, every backoff at its nominal length. */
export function worstCase(s: RetrySettings): { attemptsMs: number; backoffMs: number; totalMs: number } {
  const attemptsMs = s.maxAttempts * s.batchWriteTimeoutMs;
  let backoff = 0;
  for (let n = 1; n < s.maxAttempts; n++) backoff += nominalBackoffMs(n, s);
  return { attemptsMs, backoffMs: backoff, totalMs: attemptsMs + backoff };
}
