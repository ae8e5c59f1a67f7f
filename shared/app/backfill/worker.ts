/**
 * The partition worker (called by Cloud Tasks): rejoin the job's batch transaction, read one partition,
 * write replica UPSERTs at (T, 0, 0) and, when asked, history snapshot rows, then record the partition done
 * with a create-only marker. A failed attempt is retried whole: the replica is idempotent (highest sequence
 * wins), and the history goes to a PENDING stream that only the one claimed attempt commits (ADR-1601).
 */
import type { BackfillJob, JobPartition, JobTable, PartitionTask } from '../../domain/backfill/job';
import { snapshotHistoryRow, snapshotUpsert } from '../../domain/backfill/rows';
import { isSnapshotTooOld, snapshotTooOldError } from '../../domain/backfill/snapshot-errors';
import { isTerminal, transition } from '../../domain/backfill/state';
import type { ResolvedLookup } from '../../domain/enrichment/lookups';
import { SluiceError } from '../../domain/errors';
import type { HistoryRow } from '../../domain/history-rows';
import type { ReplicaUpsert } from '../../domain/replica-rows';
import type { WriterValue } from '../../domain/value-mapping';
import type { SnapshotRow } from '../../ports/snapshot-source';
import { appendableHistory } from './dead-letters';
import type { BackfillDeps } from './deps';
import { commitClaimed, PendingHistory } from './history';
import { JobStore } from './job-store';
import { backfillLookups, enrichSnapshotRows, lookupKeyColumns } from './lookups';
import { finishPlanning } from './resume';

/** What became of a task. */
export type PartitionOutcome =
  | { kind: 'done'; rows: number }
  | { kind: 'skipped'; reason: 'already-done' | 'job-finished' | 'cancelled' }
  | { kind: 'failed'; error: string };

/** How many batches between checks that the job was not cancelled meanwhile. */
const CANCEL_CHECK_BATCHES = 10;

/** Rough size of a row's values, to bound a batch's memory when cells are large. */
function approximateBytes(row: Record<string, WriterValue>): number {
  let n = 0;
  for (const k in row) {
    const v = row[k];
    if (typeof v === 'string') n += v.length;
    else if (Array.isArray(v)) for (const e of v) n += typeof e === 'string' ? e.length : 8;
    else n += 8;
  }
  return n;
}

class Batches {
  private rowsHeld: SnapshotRow[] = [];
  private upserts: ReplicaUpsert[] = [];
  private history: HistoryRow[] = [];
  /** The table's lookups, resolved at the snapshot timestamp by {@link prepare}. */
  private lookups: ResolvedLookup[] = [];
  /** The fact columns the lookups join on, read in wire form alongside each row. */
  keyColumns: string[] = [];
  private batch = 0;
  rows = 0;
  readonly pending: PendingHistory | undefined;
  /** Approximate bytes held (a history row holds the values again, as JSON). */
  bytes = 0;

  constructor(
    private readonly deps: BackfillDeps,
    private readonly job: BackfillJob,
    private readonly table: JobTable,
  ) {
    this.pending = table.history ? new PendingHistory(deps, table.history) : undefined;
  }

  get size(): number {
    return this.upserts.length + this.history.length;
  }

  async prepare(): Promise<void> {
    const { schema, columns } = this.table;
    this.lookups = await backfillLookups(this.deps, schema, this.job.snapshot.readTimestamp, columns);
    this.keyColumns = lookupKeyColumns(this.lookups);
  }

  add(row: SnapshotRow): void {
    const { name, schema } = this.table;
    const t = this.job.snapshot.readTimestamp;
    if (this.table.replica) this.upserts.push(snapshotUpsert(name, schema.primaryKey, row, t));
    if (this.table.history)
      this.history.push(snapshotHistoryRow(name, schema.primaryKey, row, t, this.job.id));
    if (this.lookups.length > 0) this.rowsHeld.push(row);
    this.rows++;
    this.bytes += approximateBytes(row) * ((this.table.replica ? 1 : 0) + (this.table.history ? 1 : 0));
  }

  /**
   * Writes the buffered rows: replica upserts, and history rows to the attempt's pending stream (all but
   * those too large to append).
   */
  async flush(): Promise<void> {
    await this.enrich();
    if (this.upserts.length > 0) await this.deps.replica.write(this.table.replica!, this.upserts);
    // A row no AppendRows request can carry follows the bad-record policy, as a window's does (ADR-2114).
    if (this.pending)
      await this.pending.append(await appendableHistory(this.deps, this.job, this.table, this.history));
    this.upserts = [];
    this.history = [];
    this.rowsHeld = [];
    this.bytes = 0;
    this.batch++;
  }

  /** Adds the lookups' columns, read at the snapshot timestamp, to the batch's upserts and history rows. */
  private async enrich(): Promise<void> {
    if (this.lookups.length === 0 || this.rowsHeld.length === 0) return;
    const at = this.job.snapshot.readTimestamp;
    const columns = await enrichSnapshotRows(this.deps, this.table.name, this.lookups, this.rowsHeld, at);
    if (this.table.replica)
      this.upserts = this.upserts.map((u, i) => ({ ...u, row: { ...u.row, ...columns[i] } }));
    if (this.table.history) this.history = this.history.map((h, i) => ({ ...h, ...columns[i] }));
  }

  get batchNumber(): number {
    return this.batch;
  }
}

/** What one attempt copied: its rows, whether the job stopped meanwhile, and its uncommitted history. */
interface Copied {
  rows: number;
  cancelled: boolean;
  history: PendingHistory | undefined;
}

function tableOf(job: BackfillJob, partition: JobPartition): JobTable {
  const table = job.tables.find((t) => t.name === partition.table);
  if (!table)
    throw new SluiceError(
      'permanent',
      `backfill ${job.id}: partition ${partition.index} names unknown table`,
    );
  return table;
}

/** Reads the partition and writes it; `cancelled` when the job stopped running meanwhile. */
async function copyPartition(
  deps: BackfillDeps,
  jobs: JobStore,
  job: BackfillJob,
  partition: JobPartition,
): Promise<Copied> {
  const table = tableOf(job, partition);
  const batches = new Batches(deps, job, table);
  await batches.prepare();
  const limit = deps.batchRows ?? 500;
  // Memory stays bounded whatever the cells: a batch is written at 500 rows or about 16 MiB.
  const maxBytes = deps.batchBytes ?? 16 * 1024 * 1024;
  const started = deps.now();
  const rows = deps.snapshots.read(
    job.snapshot,
    partition.handle,
    table.schema,
    undefined,
    batches.keyColumns,
  );
  for await (const row of rows) {
    batches.add(row);
    if (batches.size < limit && batches.bytes < maxBytes) continue;
    await batches.flush();
    if (batches.batchNumber % CANCEL_CHECK_BATCHES === 0) {
      const current = await jobs.read(job.id);
      if (current?.state !== 'running')
        return { rows: batches.rows, cancelled: true, history: batches.pending };
      // Progress inside a long partition, as it goes (the job view counts finished partitions).
      const seconds = Number(deps.now() - started) / 1e9;
      deps.log.info('backfill.progress', {
        job: job.id,
        partition: partition.index,
        table: partition.table,
        rows: batches.rows,
        rowsPerSecond: seconds > 0 ? Math.round(batches.rows / seconds) : null,
      });
    }
  }
  await batches.flush();
  return { rows: batches.rows, cancelled: false, history: batches.pending };
}

/**
 * Makes the attempt's history visible exactly once: finalize its stream, claim it (or find the claim of a
 * delivery that got there first) and commit the claimed stream.
 */
async function commitHistory(
  deps: BackfillDeps,
  jobs: JobStore,
  job: BackfillJob,
  partition: JobPartition,
  copied: Copied,
): Promise<void> {
  const history = copied.history;
  if (!history) return;
  const finalized = await history.finalize();
  if (finalized) {
    const claim = { stream: finalized.stream, historyRows: finalized.rows, rows: copied.rows };
    const held = await jobs.claimHistory(job.id, partition.index, claim, deps.now());
    if (held.stream !== claim.stream)
      deps.log.info('backfill.history-duplicate', {
        job: job.id,
        partition: partition.index,
        dropped: claim.stream,
      });
    await commitClaimed(deps, jobs, job, partition.index, history.destination);
  }
}

/** Marks the job succeeded when every partition has its marker, and releases the snapshot. */
async function completeIfAllDone(deps: BackfillDeps, jobs: JobStore, job: BackfillJob): Promise<void> {
  const done = await jobs.listDone(job.id);
  if (done.length < job.partitions) return;
  const { changed } = await jobs.update(job.id, (j) =>
    transition(j, { kind: 'all-partitions-done', at: deps.now() }),
  );
  if (!changed) return;
  const rows = done.reduce((sum, d) => sum + (Number(d.metadata['sluice-rows']) || 0), 0);
  deps.log.notice('backfill.succeeded', { job: job.id, partitions: done.length, rows });
  await deps.snapshots.close(job.snapshot).catch(() => undefined);
  await deps.lineage?.report(job, 'COMPLETE', deps.now());
}

/** Fails the job (a permanent error: retrying the partition cannot help). */
async function failJob(
  deps: BackfillDeps,
  jobs: JobStore,
  job: BackfillJob,
  err: SluiceError,
): Promise<PartitionOutcome> {
  const { changed } = await jobs.update(job.id, (j) =>
    transition(j, { kind: 'failed', at: deps.now(), error: err.message }),
  );
  deps.log.error('backfill.failed', err, { job: job.id });
  await deps.snapshots.close(job.snapshot).catch(() => undefined);
  if (changed) await deps.lineage?.report(job, 'FAIL', deps.now(), err.message);
  return { kind: 'failed', error: err.message };
}

async function classify(deps: BackfillDeps, job: BackfillJob, err: unknown): Promise<SluiceError> {
  if (!isSnapshotTooOld(err)) return SluiceError.from(err, `backfill ${job.id}`);
  const dialect = await deps.catalog.dialect();
  return snapshotTooOldError(job.snapshot.readTimestamp, dialect, deps.config.spanner.database, err);
}

/**
 * Runs one partition task. Resolves with the outcome (answer 2xx); throws a retryable {@link SluiceError}
 * when the attempt should be retried (answer 503/429). A permanent failure fails the job and resolves.
 */
export async function runPartition(deps: BackfillDeps, task: PartitionTask): Promise<PartitionOutcome> {
  const jobs = new JobStore(deps.store, deps.config.pipeline);
  const stored = await jobs.read(task.job);
  if (!stored) throw new SluiceError('permanent', `backfill job ${task.job} does not exist`);
  // A task can arrive before its planner moved the job to running (tasks are enqueued first), or after the
  // planner crashed: finishing planning is idempotent, so the worker does it rather than wait for a retry.
  const job = await finishPlanning(deps, jobs, stored);
  if (isTerminal(job.state))
    return { kind: 'skipped', reason: job.state === 'cancelled' ? 'cancelled' : 'job-finished' };
  if (await jobs.isDone(job.id, task.partition)) {
    await completeIfAllDone(deps, jobs, job);
    return { kind: 'skipped', reason: 'already-done' };
  }
  const partition = await jobs.readPartition(job, task.partition);
  if (!partition) throw new SluiceError('permanent', `backfill ${job.id} has no partition ${task.partition}`);
  let copied: Copied;
  try {
    const destination = tableOf(job, partition).history;
    // A delivery that claimed its history stream had copied the whole partition: commit that stream, done.
    const claimed = destination
      ? await commitClaimed(deps, jobs, job, partition.index, destination)
      : { kind: 'none' as const };
    copied =
      claimed.kind === 'committed'
        ? { rows: claimed.rows, cancelled: false, history: undefined }
        : await copyPartition(deps, jobs, job, partition);
    if (copied.cancelled) {
      copied.history?.abandon();
      return { kind: 'skipped', reason: 'cancelled' };
    }
    await commitHistory(deps, jobs, job, partition, copied);
  } catch (err) {
    const error = await classify(deps, job, err);
    if (error.kind === 'retryable') throw error;
    return failJob(deps, jobs, job, error);
  }
  await jobs.markDone(job.id, partition.index, copied.rows, deps.now());
  deps.log.info('backfill.partition', {
    job: job.id,
    partition: partition.index,
    table: partition.table,
    rows: copied.rows,
  });
  await completeIfAllDone(deps, jobs, job);
  return { kind: 'done', rows: copied.rows };
}
