/**
 * Small statistics and reporting helpers of the benchmarks: medians and percentiles of samples, the machine a
 * run happened on, and the table `npm run bench` prints.
 */
import { cpus, totalmem } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | undefined;

/**
 * Collects this process's garbage now, so that a measured run does not pay for what was allocated before it
 * (the request bodies a previous run built, for instance). Exposed once through V8's flag, as `--expose-gc`.
 */
export function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}

/** `{ median, min, max }` of `values`, for a figure that must show how far its runs agree. */
export function spread(values: number[]): { median: number; min: number; max: number } {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

/** The `q`-quantile (0..1) of `values` by nearest rank; NaN for no values. */
export function percentile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** The median of `values`. */
export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] ?? Number.NaN)
    : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** One line of the result table. */
export interface Figure {
  what: string;
  value: string;
  target: string;
  /** How many runs the median is over, and anything a reader of the table must know. */
  note: string;
}

/** Where the benchmarks ran: what `docs/performance.md` records beside the figures. */
export function machine(): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const gib = (totalmem() / 2 ** 30).toFixed(1);
  return `${cpus().length} cores (${cpu}), ${gib} GiB RAM, Node ${process.version}, ${process.platform}`;
}

/** Renders figures as a fixed-width table. */
export function table(figures: Figure[]): string {
  const head: Figure = { what: 'what', value: 'median', target: 'target', note: 'runs / note' };
  const rows = [head, ...figures];
  const width = (k: keyof Figure) => Math.max(...rows.map((r) => r[k].length));
  const line = (r: Figure) =>
    [
      r.what.padEnd(width('what')),
      r.value.padStart(width('value')),
      r.target.padEnd(width('target')),
      r.note,
    ].join(' | ');
  const rule = ['what', 'value', 'target'].map((k) => '-'.repeat(width(k as keyof Figure))).join('-+-');
  return [line(head), `${rule}-+-${'-'.repeat(width('note'))}`, ...figures.map(line)].join('\n');
}

/** Samples the process's heap and RSS every `everyMs` until stopped; returns the peaks above the baseline. */
export function memorySampler(everyMs = 10): {
  stop(): { heapMiB: number; rssMiB: number; rssMaxMiB: number };
} {
  const base = process.memoryUsage();
  let heap = base.heapUsed;
  let rss = base.rss;
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    heap = Math.max(heap, m.heapUsed);
    rss = Math.max(rss, m.rss);
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const m = process.memoryUsage();
      heap = Math.max(heap, m.heapUsed);
      rss = Math.max(rss, m.rss);
      return {
        heapMiB: (heap - base.heapUsed) / 2 ** 20,
        rssMiB: (rss - base.rss) / 2 ** 20,
        rssMaxMiB: rss / 2 ** 20,
      };
    },
  };
}

/** Formats a number with a thousands separator and `digits` decimals. */
export function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
