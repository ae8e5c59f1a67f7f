/** Clock, durations and the timestamp format used in the service's error messages. */
import { formatTimestamp, fromNanos } from '../../../../shared/domain/timestamp';

/** A wall clock in nanoseconds that never goes backwards (Date.now anchored, advanced by hrtime). */
export function realClock(): () => bigint {
  const baseNs = BigInt(Date.now()) * 1_000_000n;
  const hr0 = process.hrtime.bigint();
  let last = 0n;
  return () => {
    const t = baseNs + (process.hrtime.bigint() - hr0);
    last = t > last ? t : last + 1n;
    return last;
  };
}

/**
 * Formats like absl's default `FormatTime` (RFC 3339, fraction without trailing zeros, `+00:00`), the form
 * the official emulator's error messages use.
 */
export function messageTime(ns: bigint | null): string {
  if (ns === null) return 'infinite-future';
  const text = formatTimestamp(fromNanos(ns));
  const [main, fraction = ''] = text.slice(0, -1).split('.');
  const trimmed = fraction.replace(/0+$/, '');
  return `${main}${trimmed ? `.${trimmed}` : ''}+00:00`;
}

const UNIT_NS: Record<string, bigint> = {
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
  d: 86_400_000_000_000n,
};

/** Parses a retention period such as `36h`, `7d`, `1440m`, `86400s`; undefined when malformed. */
export function parseDurationNs(text: string): bigint | undefined {
  const m = /^(\d+)([smhd])$/.exec(text.trim());
  if (!m) return undefined;
  return BigInt(m[1] ?? '0') * (UNIT_NS[m[2] ?? 's'] ?? 0n);
}

/** Resolves after `ms`, or earlier when `wake` fires or `signal` aborts. */
export function waitFor(
  ms: number,
  wake: (cb: () => void) => () => void,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((resolve) => {
    let unsubscribe = () => {};
    const done = () => {
      clearTimeout(timer);
      unsubscribe();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    unsubscribe = wake(done);
    signal?.addEventListener('abort', done);
  });
}
