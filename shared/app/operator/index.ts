/**
 * Operator actions served by the backfill function: retrying failed partitions, replaying dead letters,
 * forgetting a table removed on purpose.
 */
export { replayDeadLetters } from './dead-letter-replay';
export { PARTITION_ID, PartitionNotFound, retryPartitions } from './partition-retry';
export { ForgetRefused, type ForgetRequest, forgetTables } from './table-forget';
