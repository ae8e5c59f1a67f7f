/**
 * Backfill history rows exactly once per backfill partition (ADR-1601). A snapshot partition is read in an
 * order Spanner does not promise to repeat, so offsets cannot line a re-read up with an earlier attempt;
 * instead each attempt writes its rows to a PENDING stream of its own (invisible until committed), finalizes
 * it, claims it create-only in the ledger bucket, and commits the claimed stream. Every later delivery of the
 * task finds the claim and commits that same stream (a repeated commit is a no-op); an attempt that dies
 * before claiming leaves a stream nobody commits, and BigQuery drops it.
 */
import type { BackfillJob } from '../../domain/backfill/job';
import { SluiceError } from '../../domain/errors';
import type { HistoryRow } from '../../domain/history-rows';
import type { HistoryCursor } from '../../domain/ledger';
import { appendExactlyOnce } from '../sinks';
import type { BackfillDeps } from './deps';
import type { JobStore } from './job-store';

/** The history rows of one partition attempt, on its own PENDING stream. */
export class PendingHistory {
  private cursor: HistoryCursor | undefined;
  /** Rows appended so far. */
  rows = 0;

  constructor(
    private readonly deps: Pick<BackfillDeps, 'history'>,
    readonly destination: string,
  ) {}

  /** Appends the next rows (creating the stream on the first call). */
  async append(rows: HistoryRow[]): Promise<void> {
    if (rows.length === 0) return;
    if (!this.cursor) {
      const s = await this.deps.history.createStream(this.destination, 'pending');
      this.cursor = { stream: s.name, offset: 0, createdAt: s.createdAt, schema: s.schema };
    }
    // Offsets protect this attempt's own re-sent requests; a failure fails the attempt, which starts over.
    const out = await appendExactlyOnce(this.deps.history, this.destination, this.cursor, rows);
    this.cursor = out.cursor;
    this.rows += rows.length;
  }

  /** Finalizes the stream; its name and row count (undefined when no row was written). */
  async finalize(): Promise<{ stream: string; rows: number } | undefined> {
    if (!this.cursor) return undefined;
    const counted = await this.deps.history.finalizeStream(this.destination, this.cursor.stream);
    if (counted !== this.rows) {
      throw new SluiceError(
        'retryable',
        `history stream ${this.cursor.stream} holds ${String(counted)} rows after finalize, ${this.rows} were appended`,
      );
    }
    return { stream: this.cursor.stream, rows: this.rows };
  }

  /** Gives the stream up (the attempt stopped): nothing commits it, so none of its rows become visible. */
  abandon(): void {
    if (this.cursor) this.deps.history.releaseStreams([this.cursor.stream]);
  }
}

/**
 * Commits the partition's claimed history stream, if there is a claim. `none`: no claim yet (read the
 * partition); `committed`: its history is in (with the claim's row count). The claim records `sent` before
 * BatchCommit and `done` after it (ADR-2111), so a retry after a later failure (the done marker's write)
 * never takes a stream BigQuery has since forgotten for one that expired uncommitted.
 * @throws SluiceError `retryable` when the claimed stream expired uncommitted (the claim is removed and the
 *   retry reads the partition again); `permanent` when it is gone after a commit was sent, since reading the
 *   partition again could append its history twice.
 */
export async function commitClaimed(
  deps: Pick<BackfillDeps, 'history' | 'log' | 'now'>,
  jobs: JobStore,
  job: BackfillJob,
  index: number,
  destination: string,
): Promise<{ kind: 'none' } | { kind: 'committed'; rows: number }> {
  const held = await jobs.readHistoryClaim(job.id, index);
  if (!held) return { kind: 'none' };
  const { claim } = held;
  if (claim.commit === 'done') return { kind: 'committed', rows: claim.rows };
  const sent = { ...claim, commit: 'sent' as const };
  const generation =
    claim.commit === 'sent'
      ? held.generation
      : await jobs.recordHistoryCommit(job.id, index, sent, held.generation, deps.now());
  const outcome = await deps.history.commitStream(destination, claim.stream);
  if (outcome === 'committed') {
    await jobs.recordHistoryCommit(job.id, index, { ...claim, commit: 'done' }, generation, deps.now());
    return { kind: 'committed', rows: claim.rows };
  }
  if (claim.commit === 'sent') throw commitUnknown(job, index, claim.stream);
  await jobs.dropHistoryClaim(job.id, index, generation);
  deps.log.warn('backfill.history-stream-gone', { job: job.id, partition: index, stream: claim.stream });
  throw new SluiceError(
    'retryable',
    `backfill ${job.id} partition ${index}: its history stream ${claim.stream} expired before it was committed; the partition is read again`,
  );
}

/** A commit was sent and BigQuery no longer knows the stream: whether its rows are in cannot be told. */
function commitUnknown(job: BackfillJob, index: number, stream: string): SluiceError {
  return new SluiceError(
    'permanent',
    `backfill ${job.id} partition ${index}: a commit of its history stream ${stream} was sent and BigQuery no longer knows the stream, so whether its rows are in the history table cannot be told; check the history table for server_transaction_id 'backfill-${job.id}' before backfilling this partition again`,
  );
}
