/**
 * Operator actions served by the backfill function: retrying failed partitions, replaying and discarding dead letters,
 * forgetting a table removed on purpose.
 */
export {
  DiscardRefused,
  type DiscardRequest,
  discardDeadLetters,
  type LetterDiscard,
  MAX_DISCARD,
} from './dead-letter-discard';
export { replayDeadLetters } from './dead-letter-replay';
export { PARTITION_ID, PartitionNotFound, retryPartitions } from './partition-retry';
export { ForgetRefused, type ForgetRequest, forgetTables } from './table-forget';
