/** Backfill use cases over ports: start (HTTP, `startAt: "snapshot"`, retention fallback), run, read, cancel. */
export type { BackfillDeps } from './deps';
export { JobStore } from './job-store';
export { type StartOptions, startBackfill } from './plan';
export { cancelBackfill, getBackfill, listBackfills } from './queries';
export { type PartitionOutcome, runPartition } from './worker';
