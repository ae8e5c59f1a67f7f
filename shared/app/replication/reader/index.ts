/**
 * The reader use case: one task reads one window of one partition, writes the sinks, moves the position only
 * after they acknowledged, and chains the next window or ends the partition. Start at `reader.ts`; a window
 * ends in `window-run.ts`; a partition ends in `partition-end.ts`.
 */
export { Reader } from './reader';
