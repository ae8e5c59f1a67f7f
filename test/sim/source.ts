/**
 * The simulated change stream: the scripted stream's truth (test/app/support/script.ts), delivered with the
 * legal behaviours of Spanner that the script alone never shows, each drawn from the run's {@link Decisions}.
 * docs/testing.md ("Simulation") lists each behaviour with its source.
 */
import type { ChangeRecord, ChildPartitionsRecord } from '../../shared/domain/change-record';
import type { Timestamp } from '../../shared/domain/timestamp';
import type { ChangeQuery, ChangeSource } from '../../shared/ports/change-source';
import { GrpcLikeError, type ScriptedStream } from '../app/support/script';
import type { Decisions } from './decisions';
import type { Killer } from './kill';

/** Probabilities of the stream's behaviours (a scenario may change them). */
export interface SourceBehaviour {
  /** A split or merge reported as one child-partitions record per child, at one timestamp. */
  splitRecords: number;
  /** A query fails at a record with a retryable status (UNAVAILABLE, ABORTED). */
  queryFails: number;
  /** Time passes while a record is delivered (a slow response chunk): up to this many ms. */
  maxRecordMs: number;
  /** A response chunk is slow enough to reach the request deadline. */
  slowChunk: number;
}

export const DEFAULT_SOURCE: SourceBehaviour = {
  splitRecords: 0.5,
  queryFails: 0.05,
  maxRecordMs: 20,
  slowChunk: 0.02,
};

function timestampOf(record: ChangeRecord): Timestamp {
  if (record.kind === 'data-change') return record.commitTimestamp;
  if (record.kind === 'heartbeat') return record.timestamp;
  return record.startTimestamp;
}

/** gRPC codes a change-stream query may end with mid-stream and that a client retries: UNAVAILABLE, ABORTED. */
const RETRYABLE_CODES = [14, 10] as const;

export class SimSource implements ChangeSource {
  /**
   * The latest end of any query served: Spanner never commits at or before a timestamp it has already served
   * a query up to, so the workload commits after it.
   */
  horizon: Timestamp | null = null;
  /** Liveness phase: no failing queries and no slow chunks (legal record shapes stay). */
  quiet = false;

  constructor(
    private readonly script: ScriptedStream,
    private readonly rng: Decisions,
    private readonly advance: (ms: number) => void,
    private readonly behaviour: SourceBehaviour = DEFAULT_SOURCE,
    private readonly killer: Killer | null = null,
  ) {}

  async *read(query: ChangeQuery, signal?: AbortSignal): AsyncIterable<ChangeRecord> {
    const { rng, behaviour } = this;
    if (query.to !== null && (this.horizon === null || query.to > this.horizon)) this.horizon = query.to;
    const failAt = !this.quiet && rng.chance(behaviour.queryFails) ? rng.int(8) : -1;
    // The scripted answer is fixed when the query starts; holding it lets a window's cut see what follows.
    const records: ChangeRecord[] = [];
    for await (const record of this.script.read(query)) records.push(record);
    let n = 0;
    let previous: Timestamp | null = null;
    // Set while a record is with the consumer: the reader broke off there (its deadline) when `finally` runs.
    let atYield = false;
    let nextSameTimestamp = false;
    try {
      for (const [k, record] of records.entries()) {
        const pieces = this.asDelivered(record);
        for (const [j, delivered] of pieces.entries()) {
          if (n++ === failAt) throw new GrpcLikeError(rng.pick(RETRYABLE_CODES), 'simulated stream failure');
          this.arrive(previous === timestampOf(delivered));
          if (signal?.aborted) return;
          previous = timestampOf(delivered);
          if (delivered.kind === 'data-change' && delivered.isSystemTransaction)
            rng.note('ttl-record-delivered');
          await this.killer?.point();
          const next = j + 1 < pieces.length ? pieces[j + 1] : records[k + 1];
          nextSameTimestamp = next?.kind === delivered.kind && timestampOf(next) === previous;
          atYield = true;
          yield delivered;
          atYield = false;
        }
      }
    } finally {
      // Records of one timestamp on both sides of the cut: the rest comes in the next window.
      if (atYield && nextSameTimestamp) rng.note('timestamp-split-across-windows');
    }
  }

  /**
   * Virtual time passes while a record arrives, so a request deadline may fall between any two records; a
   * slow chunk between two records of one timestamp splits that timestamp across response chunks.
   */
  private arrive(sameTimestamp: boolean): void {
    this.advance(this.rng.int(this.behaviour.maxRecordMs));
    if (this.quiet || !this.rng.chance(this.behaviour.slowChunk)) return;
    this.advance(3_000);
    if (sameTimestamp) this.rng.note('timestamp-split-across-chunks');
  }

  /**
   * One child-partitions record naming several children may be delivered as several records with the same
   * start timestamp, ordered by `record_sequence` (spanner-change-streams.md §2, "record_sequence of a child
   * partitions record ... when one partition returns several of them with the same start_timestamp").
   */
  private asDelivered(record: ChangeRecord): ChangeRecord[] {
    if (record.kind !== 'child-partitions' || record.childPartitions.length < 2) return [record];
    if (!this.rng.chance(this.behaviour.splitRecords)) return [record];
    return record.childPartitions.map(
      (child, i): ChildPartitionsRecord => ({
        kind: 'child-partitions',
        startTimestamp: record.startTimestamp,
        recordSequence: String(i).padStart(8, '0'),
        childPartitions: [child],
      }),
    );
  }
}
