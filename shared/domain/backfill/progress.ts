/**
 * What `GET /backfills/{id}` reports: the job's state and times, and progress computed from the done
 * markers (one listing), so the numbers are exactly what workers recorded as written — per job and per
 * table, with the rate since the job started.
 */
import { formatTimestamp, type Timestamp } from '../timestamp';
import { type BackfillJob, DONE_ROWS_KEY } from './job';

/** A done marker as a listing returns it. */
export interface DoneMarker {
  name: string;
  metadata: Record<string, string>;
}

/** The JSON view of a job. */
export interface JobView {
  id: string;
  state: BackfillJob['state'];
  origin: BackfillJob['origin'];
  snapshotTimestamp: string;
  tables: Array<{
    name: string;
    replica?: string;
    history?: string;
    partitions: number;
    partitionsDone: number;
    rowsWritten: number;
  }>;
  targets: BackfillJob['targets'];
  partitions: { done: number; total: number };
  rowsWritten: number;
  /** Rows written per second since the job started (to its end, or to now while it runs); null before. */
  rowsPerSecond: number | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  error: string | null;
}

function rowsOf(marker: DoneMarker): number {
  const rows = Number(marker.metadata[DONE_ROWS_KEY]);
  return Number.isSafeInteger(rows) && rows >= 0 ? rows : 0;
}

/** The partition index of a done marker (`…/done/000012.json`), or undefined for another name. */
function indexOf(marker: DoneMarker): number | undefined {
  const m = /\/done\/(\d+)\.json$/.exec(marker.name);
  return m ? Number(m[1]) : undefined;
}

function rate(rows: number, from: Timestamp | null, to: Timestamp): number | null {
  if (from === null) return null;
  const seconds = Number(to - from) / 1e9;
  return seconds > 0 ? Math.round((rows / seconds) * 10) / 10 : null;
}

/** Builds the view of a job from the job object and its done markers; `now` ends the rate of a running job. */
export function jobView(job: BackfillJob, done: DoneMarker[], now?: Timestamp): JobView {
  const time = (t: bigint | null) => (t === null ? null : formatTimestamp(t as typeof job.createdAt));
  const byIndex = new Map(done.map((m) => [indexOf(m), rowsOf(m)]));
  const rowsWritten = done.reduce((sum, m) => sum + rowsOf(m), 0);
  const end = job.finishedAt ?? now ?? null;
  return {
    id: job.id,
    state: job.state,
    origin: job.origin,
    snapshotTimestamp: formatTimestamp(job.snapshot.readTimestamp),
    tables: job.tables.map((t) => {
      let partitionsDone = 0;
      let rows = 0;
      for (let i = t.firstPartition; i < t.firstPartition + t.partitions; i++) {
        const r = byIndex.get(i);
        if (r === undefined) continue;
        partitionsDone++;
        rows += r;
      }
      return {
        name: t.name,
        ...(t.replica ? { replica: t.replica } : {}),
        ...(t.history ? { history: t.history } : {}),
        partitions: t.partitions,
        partitionsDone,
        rowsWritten: rows,
      };
    }),
    targets: job.targets,
    partitions: { done: done.length, total: job.partitions },
    rowsWritten,
    rowsPerSecond: end === null ? null : rate(rowsWritten, job.startedAt, end),
    createdAt: formatTimestamp(job.createdAt),
    startedAt: time(job.startedAt),
    finishedAt: time(job.finishedAt),
    error: job.error,
  };
}
