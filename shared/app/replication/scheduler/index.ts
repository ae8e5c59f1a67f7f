/**
 * The scheduler use case: one tick validates the stream, starts the ledger, guards retention, promotes and
 * enqueues ready partitions, removes finished ones and writes the status. Start at `scheduler.ts`.
 */
export { Scheduler } from './scheduler';
