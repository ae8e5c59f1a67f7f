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

/**
 * A table's state in a job: `done` once every partition of it is; otherwise the job's (`running`, …), and
 * for a job that ended without it `failed` or `cancelled` (its partitions not done were never copied).
 */
function tableState(jobState: string, done: number, total: number): string {
  if (done >= total) return 'done';
  if (jobState === 'succeeded') return 'done';
  if (jobState === 'failed' || jobState === 'cancelled') return jobState;
  return done > 0 || jobState === 'running' ? 'running' : jobState;
}

/**
 * `backfill show`'s per-table breakdown. A partition's rows are recorded when it is done: every row it read
 * was written (a row that cannot be written fails the partition, whose attempt is retried whole), so rows
 * read equal rows written; the rows of a partition not done are not counted, and `not copied` says how many
 * partitions of a table a failed or cancelled job left.
 */
export function formatJobTables(job: unknown): string {
  const j = obj(job);
  const state = String(j.state);
  const ended = state === 'failed' || state === 'cancelled';
  const header = ['table', 'state', 'partitions', 'rows read', 'rows written', 'not copied'];
  const rows = list(j.tables).map((t) => {
    const done = Number(t.partitionsDone ?? 0);
    const total = Number(t.partitions ?? 0);
    const rowsWritten = String(t.rowsWritten ?? 0);
    const left = ended ? String(Math.max(0, total - done)) : '-';
    return [
      String(t.name),
      tableState(state, done, total),
      `${done}/${total}`,
      rowsWritten,
      rowsWritten,
      left,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
