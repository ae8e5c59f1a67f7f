/**
 * Turns the core's commits into data change records in the partitions that own the changed keys, and keeps
 * the last commit timestamp so that churn can pick a partition boundary after every recorded commit.
 */
import type { CommitEvent } from '../hooks';
import { hashKey } from './partitions';
import { buildRecords } from './records';
import { retentionNs, type StreamRegistry } from './registry';

/** The commits one engine has recorded. */
export class CommitLog {
  private lastCommitNs = 0n;
  private txCounter = 0;

  constructor(private readonly registry: StreamRegistry) {}

  /** Appends the commit's records to every live stream that tracks them, then expires old records. */
  record(event: CommitEvent): void {
    this.lastCommitNs = event.commitTimestampNs;
    const txId = String(++this.txCounter);
    for (const { stream, partitions } of this.registry.live()) {
      if (event.excludedFromChangeStreams && stream.options.allow_txn_exclusion === true) continue;
      const owner = (table: string, keyText: string) =>
        partitions.owner(hashKey(`${table}\u0000${keyText}`), event.commitTimestampNs);
      for (const [partition, records] of buildRecords(stream, event, txId, owner)) {
        partition.records.push(...records);
      }
      partitions.expire(event.commitTimestampNs - retentionNs(stream));
    }
  }

  /**
   * The timestamp a churn ends partitions at: now, but strictly after the last commit. Records at or after
   * the boundary belong to the children, so a boundary at or before an already-recorded commit would leave
   * that commit in a parent that should no longer hold it.
   */
  churnAt(nowNs: bigint): bigint {
    return nowNs > this.lastCommitNs ? nowNs : this.lastCommitNs + 1n;
  }
}
