/** What the CLI prints: the status, backfill jobs and a progress bar, from the operator function's JSON. */

/** A text bar: `[#########.........]  42%`. */
export function bar(done: number, total: number, width = 30): string {
  const ratio = total > 0 ? Math.min(1, done / total) : 0;
  const filled = Math.round(ratio * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}%`;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.map(obj) : []);

/** One backfill job on one line. */
export function formatJob(job: unknown): string {
  const j = obj(job);
  const p = obj(j.partitions);
  const tables = list(j.tables)
    .map((t) => String(t.name))
    .join(',');
  return `${String(j.id)}  ${String(j.state).padEnd(9)}  ${tables}  partitions ${String(p.done ?? 0)}/${String(p.total ?? 0)}  rows ${String(j.rowsWritten ?? 0)}  at ${String(j.snapshotTimestamp ?? '-')}${j.error ? `  error: ${String(j.error)}` : ''}`;
}

/** Progress of a job being waited for: bar, partitions, rows and rows per second. */
export function formatProgress(job: unknown, rowsPerSecond: number): string {
  const j = obj(job);
  const p = obj(j.partitions);
  const done = Number(p.done ?? 0);
  const total = Number(p.total ?? 0);
  return `${bar(done, total)}  partitions ${done}/${total}  rows ${String(j.rowsWritten ?? 0)}  ${rowsPerSecond.toFixed(0)} rows/s  ${String(j.state)}`;
}
