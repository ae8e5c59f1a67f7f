/**
 * The backfill as the scheduler sees it: a port with one operation, so the scheduler's start and retention
 * paths depend on "start (or find) a backfill" and not on the backfill's own ports.
 */
import type { BackfillJob, JobOrigin } from '../../domain/backfill/job';
import type { BackfillRequest, Checked } from '../../domain/backfill/request';
import type { PipelineConfig } from '../../domain/config';
import { targetsFor } from '../../domain/table-rules';
import type { BackfillDeps } from './deps';
import { type StartOptions, startBackfill } from './plan';

/** Starts a backfill, or returns the existing job of `options.id` (see {@link startBackfill}). */
export interface BackfillStarter {
  start(
    request: BackfillRequest,
    options: StartOptions & { id: string; origin: JobOrigin },
  ): Promise<Checked<BackfillJob>>;
}

/** The starter over the backfill's ports. */
export function backfillStarter(deps: BackfillDeps): BackfillStarter {
  return { start: (request, options) => startBackfill(deps, request, options) };
}

/**
 * Source tables with a replica, explicit ones first (in configuration order), then the watched tables the
 * all-tables rule gives one: what a hand-over must load.
 */
export function replicaTables(
  config: Pick<PipelineConfig, 'tables' | 'allTables' | 'excludedTables'>,
  watched: readonly string[] = [],
): string[] {
  const explicit = Object.entries(config.tables)
    .filter(([, targets]) => targets.replica !== undefined)
    .map(([table]) => table);
  const ruled = watched.filter((t) => !explicit.includes(t) && targetsFor(config, t)?.replica !== undefined);
  return [...explicit, ...ruled];
}
