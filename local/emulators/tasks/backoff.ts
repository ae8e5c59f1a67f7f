/**
 * Cloud Tasks' retry timing, as the `RetryConfig` proto documents it: the interval starts at `minBackoff`,
 * doubles `maxDoublings` times, then grows linearly by `2^maxDoublings * minBackoff` per retry, capped at
 * `maxBackoff` (e.g. min 10 s, max 300 s, 3 doublings: 10, 20, 40, 80, 160, 240, 300, 300, ...).
 */

/** The retry part of a queue's configuration, durations in milliseconds. */
export interface RetryPolicy {
  /** Attempts including the first; -1 is unlimited. */
  maxAttempts: number;
  /** Retry window from the first attempt; 0 is unlimited. */
  maxRetryDurationMs: number;
  minBackoffMs: number;
  maxBackoffMs: number;
  maxDoublings: number;
}

/** Production defaults (the values `gcloud tasks queues describe` shows for a new queue). */
export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 100,
  maxRetryDurationMs: 0,
  minBackoffMs: 100,
  maxBackoffMs: 3_600_000,
  maxDoublings: 16,
};

/** Delay before retry number `retry` (1 = the retry after the first failed attempt). */
export function backoffMs(policy: RetryPolicy, retry: number): number {
  const step = Math.max(1, retry) - 1;
  const doublings = Math.min(step, policy.maxDoublings);
  const base = policy.minBackoffMs * 2 ** doublings;
  const linear = step > policy.maxDoublings ? base * (step - policy.maxDoublings + 1) : base;
  return Math.min(linear, policy.maxBackoffMs);
}

/**
 * Whether a task that has been attempted `attempts` times, the first attempt `elapsedMs` ago, gets no more
 * attempts: every configured limit must be reached (unlimited ones do not count).
 */
export function retriesExhausted(policy: RetryPolicy, attempts: number, elapsedMs: number): boolean {
  const limits: boolean[] = [];
  if (policy.maxAttempts !== -1) limits.push(attempts >= policy.maxAttempts);
  if (policy.maxRetryDurationMs > 0) limits.push(elapsedMs >= policy.maxRetryDurationMs);
  return limits.length > 0 && limits.every(Boolean);
}
