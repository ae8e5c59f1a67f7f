/**
 * The partition ledger in Cloud Storage (compare-and-swap entries, the manifest), the status object the
 * scheduler writes and every reader shows, and the dead letters (the stream's and the writer's). Used by both sides of replication,
 * by backfills and by the operator routes.
 */

export { type DeadLetterListing, type ListedLetter, listDeadLetters } from './dead-letter-listing';
export { logDeadLettered } from './dead-lettered';
export { type DeadLetterCounts, type DeadLetterDetail, DeadLetterStore, detailOf } from './dead-letters';
export { LedgerStore, type ListedPartition, newWriterToken, type Versioned } from './ledger-store';
export { buildStatus, type PipelineStatus, partitionError, type StatusError, stoppedStatus } from './status';
export { type ReadWriterLetter, WriterDeadLetterStore } from './writer-dead-letters';
