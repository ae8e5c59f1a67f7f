/**
 * Ports of the reader throughput benchmark: sinks that count what they pass on, a change source that records
 * what the real one returned, and the replay of those records as an in-memory source — so the in-process run
 * reads exactly the records the emulator run read.
 */
import { MemoryChangeSource } from '../../shared/adapters/memory/change-source';
import type { ChangeRecord } from '../../shared/domain/change-record';
import type { HistoryRow } from '../../shared/domain/history-rows';
import type { ReplicaDelete, ReplicaUpsert } from '../../shared/domain/replica-rows';
import type { ChangeQuery, ChangeSource } from '../../shared/ports/change-source';
import type { HistorySink, HistoryStream, ReplicaSink } from '../../shared/ports/sinks';

/** Rows the sinks acknowledged. */
export interface Counts {
  replica: number;
  history: number;
}

/** A replica sink that counts acknowledged rows. */
export class CountingReplica implements ReplicaSink {
  constructor(
    private readonly inner: ReplicaSink,
    private readonly counts: Counts,
  ) {}
  ensureTable(...args: Parameters<ReplicaSink['ensureTable']>): Promise<void> {
    return this.inner.ensureTable(...args);
  }
  async write(destination: string, changes: Array<ReplicaUpsert | ReplicaDelete>): Promise<void> {
    await this.inner.write(destination, changes);
    this.counts.replica += changes.length;
  }
}

/** A history sink that counts acknowledged rows. */
export class CountingHistory implements HistorySink {
  constructor(
    private readonly inner: HistorySink,
    private readonly counts: Counts,
  ) {}
  ensureTable(...args: Parameters<HistorySink['ensureTable']>): Promise<void> {
    return this.inner.ensureTable(...args);
  }
  tableSchema(destination: string): Promise<string> {
    return this.inner.tableSchema(destination);
  }
  createStream(destination: string, type: 'committed' | 'pending'): Promise<HistoryStream> {
    return this.inner.createStream(destination, type);
  }
  async appendAt(destination: string, stream: string, offset: number, rows: HistoryRow[]) {
    const out = await this.inner.appendAt(destination, stream, offset, rows);
    if (out.kind === 'appended') this.counts.history += rows.length;
    return out;
  }
  finalizeStream(destination: string, stream: string): Promise<number | null> {
    return this.inner.finalizeStream(destination, stream);
  }
  commitStream(destination: string, stream: string): Promise<'committed' | 'gone'> {
    return this.inner.commitStream(destination, stream);
  }
  releaseStreams(streams: string[]): void {
    this.inner.releaseStreams(streams);
  }
}

/** Records every record of every query, by partition token (`null`: the initial query). */
export class RecordingSource implements ChangeSource {
  readonly records = new Map<string | null, ChangeRecord[]>();
  constructor(private readonly inner: ChangeSource) {}

  async *read(query: ChangeQuery, signal?: AbortSignal): AsyncIterable<ChangeRecord> {
    const list = this.records.get(query.partitionToken) ?? [];
    this.records.set(query.partitionToken, list);
    for await (const record of this.inner.read(query, signal)) {
      if (record.kind !== 'heartbeat') list.push(record);
      yield record;
    }
  }

  /** An in-memory source that answers with the recorded partitions and records. */
  replay(): MemoryChangeSource {
    const source = new MemoryChangeSource();
    for (const record of this.records.get(null) ?? []) {
      if (record.kind !== 'child-partitions') continue;
      for (const child of record.childPartitions) source.addPartition(child.token, record.startTimestamp);
    }
    for (const [token, records] of this.records) {
      if (token === null) continue;
      for (const record of records) source.append(token, record);
    }
    return source;
  }
}
