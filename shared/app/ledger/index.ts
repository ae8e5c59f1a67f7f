/**
 * The partition ledger in Cloud Storage (compare-and-swap entries, the manifest), the status object the
 * scheduler writes and every reader shows, and the stream's dead letters. Used by both sides of replication,
 * by backfills and by the operator routes.
 */
export { type DeadLetterCounts, type DeadLetterDetail, DeadLetterStore, detailOf } from './dead-letters';
export { LedgerStore, type ListedPartition, newWriterToken, type Versioned } from './ledger-store';
export { buildStatus, type PipelineStatus, partitionError, type StatusError, stoppedStatus } from './status';
