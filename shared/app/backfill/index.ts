/** Backfill use cases over ports: start (HTTP, `startAt: "snapshot"`, retention fallback), run, read, cancel. */
export type { BackfillDeps } from './deps';
export { decodePageToken } from './job-index';
export { JobStore } from './job-store';
export { type StartOptions, startBackfill } from './plan';
export {
  type BackfillPage,
  cancelBackfill,
  DEFAULT_BACKFILL_PAGE_SIZE,
  getBackfill,
  listBackfills,
} from './queries';
export { type BackfillStarter, backfillStarter, replicaTables } from './starter';
export { type PartitionOutcome, runPartition } from './worker';
