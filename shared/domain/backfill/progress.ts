/**
 * What `GET /backfills/{id}` reports: the job's state and times, and progress computed from the done
 * markers (one listing), so the numbers are exactly what workers recorded as written.
 */
import { formatTimestamp } from '../timestamp';
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
  tables: Array<{ name: string; replica?: string; history?: string; partitions: number }>;
  targets: BackfillJob['targets'];
  partitions: { done: number; total: number };
  rowsWritten: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  error: string | null;
}

function rowsOf(marker: DoneMarker): number {
  const rows = Number(marker.metadata[DONE_ROWS_KEY]);
  return Number.isSafeInteger(rows) && rows >= 0 ? rows : 0;
}

/** Builds the view of a job from the job object and its done markers. */
export function jobView(job: BackfillJob, done: DoneMarker[]): JobView {
  const time = (t: bigint | null) => (t === null ? null : formatTimestamp(t as typeof job.createdAt));
  return {
    id: job.id,
    state: job.state,
    origin: job.origin,
    snapshotTimestamp: formatTimestamp(job.snapshot.readTimestamp),
    tables: job.tables.map((t) => ({
      name: t.name,
      ...(t.replica ? { replica: t.replica } : {}),
      ...(t.history ? { history: t.history } : {}),
      partitions: t.partitions,
    })),
    targets: job.targets,
    partitions: { done: done.length, total: job.partitions },
    rowsWritten: done.reduce((sum, m) => sum + rowsOf(m), 0),
    createdAt: formatTimestamp(job.createdAt),
    startedAt: time(job.startedAt),
    finishedAt: time(job.finishedAt),
    error: job.error,
  };
}
