/** The retry-interval formula and the give-up rule of `RetryConfig`. */
import {
  backoffMs,
  DEFAULT_RETRY,
  type RetryPolicy,
  retriesExhausted,
} from '../../../local/emulators/tasks/backoff';

const proto: RetryPolicy = { ...DEFAULT_RETRY, minBackoffMs: 10_000, maxBackoffMs: 300_000, maxDoublings: 3 };

test('the example of the RetryConfig proto: doubles, then linear, then capped', () => {
  const seconds = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffMs(proto, n) / 1000);
  expect(seconds).toEqual([10, 20, 40, 80, 160, 240, 300, 300]);
});

test('zero doublings is a constant interval; the cap always holds', () => {
  const flat = { ...proto, maxDoublings: 0 };
  expect([1, 2, 3].map((n) => backoffMs(flat, n))).toEqual([10_000, 20_000, 30_000]);
  for (let n = 1; n < 50; n++) expect(backoffMs(DEFAULT_RETRY, n)).toBeLessThanOrEqual(3_600_000);
});

test('a task stops only when every configured limit is reached', () => {
  const both = { ...proto, maxAttempts: 3, maxRetryDurationMs: 1000 };
  expect(retriesExhausted(both, 3, 500)).toBe(false);
  expect(retriesExhausted(both, 2, 5000)).toBe(false);
  expect(retriesExhausted(both, 3, 1000)).toBe(true);
  expect(retriesExhausted({ ...proto, maxAttempts: -1 }, 1_000_000, 1e12)).toBe(false);
  expect(retriesExhausted({ ...proto, maxAttempts: 2 }, 2, 0)).toBe(true);
});
