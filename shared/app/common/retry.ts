/**
 * Bounded retries with exponential backoff for transient failures (HTTP 429 / 5xx, gRPC UNAVAILABLE, …), as
 * decided by {@link classifyError}. Anything else is thrown at once: retrying cannot change a conflict or a
 * permanent failure.
 */
import { classifyError, SluiceError } from '../../domain/errors';

/** How hard to retry. */
export interface RetryPolicy {
  /** Attempts in total (≥ 1). */
  attempts: number;
  /** Delay before the second attempt; doubled each time, capped by `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Injected so tests run without waiting. */
  sleep?: (ms: number) => Promise<void>;
}

/** A policy for ledger calls: 5 attempts, 100 ms doubling to 2 s (well inside a tick or a window). */
export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseDelayMs: 100, maxDelayMs: 2_000 };

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `op`, retrying retryable failures up to the policy's attempts.
 * @throws SluiceError of the last failure, classified, with `what` in its message.
 */
export async function withRetries<T>(what: string, op: () => Promise<T>, policy = DEFAULT_RETRY): Promise<T> {
  const sleep = policy.sleep ?? realSleep;
  let delay = policy.baseDelayMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await op();
    } catch (err) {
      if (classifyError(err) !== 'retryable' || attempt >= policy.attempts) throw SluiceError.from(err, what);
      // Jitter spreads concurrent writers apart; the cap keeps the total bounded.
      await sleep(Math.min(delay, policy.maxDelayMs) * (0.5 + Math.random() / 2));
      delay *= 2;
    }
  }
}
