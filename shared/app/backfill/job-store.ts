/**
 * Backfill job objects in the ledger bucket, through the object-store port: the job (compare-and-swap),
 * its partitions (written once) and create-only done markers (one object per partition, so concurrent
 * workers never contend on one object).
 */
import { randomUUID } from 'node:crypto';
import {
  type BackfillJob,
  DONE_ROWS_KEY,
  decodeHistoryClaim,
  decodeJob,
  decodePartition,
  encodeJob,
  encodePartition,
  type HistoryClaim,
  type JobPartition,
  jobObjects,
} from '../../domain/backfill/job';
import type { DoneMarker } from '../../domain/backfill/progress';
import { isTerminal } from '../../domain/backfill/state';
import { SluiceError } from '../../domain/errors';
import type { Timestamp } from '../../domain/timestamp';
import { listAll, type ObjectStore, type WriteOptions } from '../../ports/object-store';
import { JobIndex } from './job-index';

const MAX_CAS_ATTEMPTS = 8;
const WRITE_CONCURRENCY = 16;

/** Metadata mirrored on the job object, so a listing shows state without reading bodies. */
function jobMetadata(job: BackfillJob): Record<string, string> {
  return { 'sluice-state': job.state, 'sluice-origin': job.origin };
}

/**
 * GCS custom time (RFC 3339, milliseconds: a wall time for the bucket's lifecycle rule, not data). A job
 * gets it when it finishes; partitions and markers get their write time — a job always finishes within the
 * database's version retention (at most 7 days), well before the rule's age.
 */
export function customTimeOf(wallTime: Timestamp): string {
  return new Date(Number(wallTime / 1_000_000n)).toISOString();
}

function jobWriteOptions(job: BackfillJob, ifGeneration: WriteOptions['ifGeneration']): WriteOptions {
  const finished = isTerminal(job.state) && job.finishedAt !== null;
  return {
    ifGeneration,
    metadata: jobMetadata(job),
    contentType: 'application/json',
    writerToken: randomUUID(),
    ...(finished ? { customTime: customTimeOf(job.finishedAt!) } : {}),
  };
}

/** Reads and writes the objects of backfill jobs of one pipeline. */
export class JobStore {
  /** The jobs' index, newest first (ADR-2308). */
  readonly index: JobIndex;

  constructor(
    private readonly store: ObjectStore,
    private readonly pipeline: string,
  ) {
    this.index = new JobIndex(store, pipeline);
  }

  /**
   * Creates a job and its index entry; false when a job with the same id already exists (nothing written).
   * The entry is written first: a job object never exists without one, whichever write fails, so a listing
   * never hides a job (an entry whose job was never written is skipped by the listing).
   */
  async create(job: BackfillJob): Promise<boolean> {
    const name = jobObjects.job(this.pipeline, job.id);
    await this.index.record(job, '0');
    const outcome = await this.store.write(name, encodeJob(job), jobWriteOptions(job, 0));
    if (outcome.ok) await this.index.record(job, outcome.generation);
    return outcome.ok;
  }

  /** The job, or undefined when there is none with this id. */
  async read(id: string): Promise<BackfillJob | undefined> {
    const object = await this.store.read(jobObjects.job(this.pipeline, id));
    return object && decodeJob(object.data);
  }

  /**
   * Applies `change` with compare-and-swap, re-reading on a lost race. `change` returning undefined leaves
   * the job as it is. Returns the job as stored afterwards and whether this call changed it.
   */
  async update(
    id: string,
    change: (job: BackfillJob) => BackfillJob | undefined,
  ): Promise<{ job: BackfillJob; changed: boolean }> {
    const name = jobObjects.job(this.pipeline, id);
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const object = await this.store.read(name);
      if (!object) throw new SluiceError('permanent', `backfill job ${id} does not exist`);
      const job = decodeJob(object.data);
      const next = change(job);
      if (!next) return { job, changed: false };
      const outcome = await this.store.write(name, encodeJob(next), jobWriteOptions(next, object.generation));
      if (!outcome.ok) continue;
      // The index shows the state; a job whose entry is lost is indexed again by its next change.
      if (next.state !== job.state) await this.index.record(next, outcome.generation);
      return { job: next, changed: true };
    }
    throw new SluiceError('retryable', `backfill job ${id}: too many concurrent updates`);
  }

  /**
   * Stores the partitions of one planning attempt (create-only under the attempt's own plan token, so an
   * existing object can only be this attempt's own, retried write).
   */
  async writePartitions(id: string, plan: string, partitions: JobPartition[], at: Timestamp): Promise<void> {
    for (let i = 0; i < partitions.length; i += WRITE_CONCURRENCY) {
      await Promise.all(
        partitions.slice(i, i + WRITE_CONCURRENCY).map(async (p) => {
          const name = jobObjects.partition(this.pipeline, id, plan, p.index);
          await this.store.write(name, encodePartition(p), {
            ifGeneration: 0,
            contentType: 'application/json',
            customTime: customTimeOf(at),
          });
        }),
      );
    }
  }

  /** One partition of a job, or undefined. */
  async readPartition(job: BackfillJob, index: number): Promise<JobPartition | undefined> {
    const object = await this.store.read(jobObjects.partition(this.pipeline, job.id, job.plan, index));
    return object && decodePartition(object.data);
  }

  /** Whether the partition's done marker exists. */
  async isDone(id: string, index: number): Promise<boolean> {
    return (await this.store.read(jobObjects.done(this.pipeline, id, index))) !== undefined;
  }

  /** Records a partition done; false when a marker already existed (another delivery finished it). */
  async markDone(id: string, index: number, rows: number, at: Timestamp): Promise<boolean> {
    const outcome = await this.store.write(
      jobObjects.done(this.pipeline, id, index),
      Buffer.from(JSON.stringify({ partition: index, rows })),
      {
        ifGeneration: 0,
        metadata: { [DONE_ROWS_KEY]: String(rows) },
        contentType: 'application/json',
        customTime: customTimeOf(at),
      },
    );
    return outcome.ok;
  }

  /**
   * Claims `claim.stream` as the one history stream of the partition (create-only). Returns the claim that
   * holds: this one, or the one another delivery of the task made first.
   */
  async claimHistory(id: string, index: number, claim: HistoryClaim, at: Timestamp): Promise<HistoryClaim> {
    const name = jobObjects.historyClaim(this.pipeline, id, index);
    const outcome = await this.store.write(name, Buffer.from(JSON.stringify(claim)), {
      ifGeneration: 0,
      contentType: 'application/json',
      customTime: customTimeOf(at),
      writerToken: randomUUID(),
    });
    if (outcome.ok) return claim;
    const held = await this.readHistoryClaim(id, index);
    if (!held)
      throw new SluiceError('retryable', `history claim of backfill ${id} partition ${index} vanished`);
    return held.claim;
  }

  /** The partition's history claim with its generation, or undefined. */
  async readHistoryClaim(
    id: string,
    index: number,
  ): Promise<{ claim: HistoryClaim; generation: string } | undefined> {
    const object = await this.store.read(jobObjects.historyClaim(this.pipeline, id, index));
    return object && { claim: decodeHistoryClaim(object.data), generation: object.generation };
  }

  /**
   * Rewrites the claim (still at `generation`) to record how far its commit got; the new generation. Another
   * delivery of the task may have recorded the same step (or a later one) first: that generation is returned.
   * @throws SluiceError (`retryable`) when the claim changed otherwise.
   */
  async recordHistoryCommit(
    id: string,
    index: number,
    claim: HistoryClaim,
    generation: string,
    at: Timestamp,
  ): Promise<string> {
    const outcome = await this.store.write(
      jobObjects.historyClaim(this.pipeline, id, index),
      Buffer.from(JSON.stringify(claim)),
      { ifGeneration: generation, contentType: 'application/json', customTime: customTimeOf(at) },
    );
    if (outcome.ok) return outcome.generation;
    const held = await this.readHistoryClaim(id, index);
    const same = held?.claim.stream === claim.stream;
    if (held && same && (held.claim.commit === claim.commit || held.claim.commit === 'done'))
      return held.generation;
    throw new SluiceError('retryable', `history claim of backfill ${id} partition ${index} changed under us`);
  }

  /** Removes a claim whose stream BigQuery no longer knows (the partition is then read again). */
  async dropHistoryClaim(id: string, index: number, generation: string): Promise<void> {
    await this.store.delete(jobObjects.historyClaim(this.pipeline, id, index), generation);
  }

  /** Done markers of a job (names and metadata, from listings only). */
  async listDone(id: string): Promise<DoneMarker[]> {
    const { items } = await listAll(this.store, jobObjects.donePrefix(this.pipeline, id));
    return items.map((i) => ({ name: i.name, metadata: i.metadata }));
  }
}
