/**
 * What both sides of replication share: the reader task (body, deterministic id, enqueueing) and the stream-
 * option guard run by every window and every tick.
 */
export { enqueueReaderTask, type ReaderTask, readerTaskSchema } from './reader-task';
export { StreamGuard } from './stream-guard';
