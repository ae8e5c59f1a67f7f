/**
 * Writing BigQuery: the replica's CDC upserts and deletes (with the bad-record policy), the history's
 * exactly-once appends on committed streams, and following schema drift before the first row that needs it.
 * Used by the reader, backfills and dead-letter replay.
 */
export { appendExactlyOnce, StreamUnusableError } from './history-append';
export { mergeRejected, type RecordOfRow, withoutOversizedHistory } from './history-oversize';
export { HistoryStreams } from './history-streams';
export { writeReplicaTable } from './replica-table';
export {
  enrichBatch,
  followSchema,
  historyBatches,
  type ReplicaPorts,
  type SinkPorts,
  writeReplica,
} from './sink-writer';
