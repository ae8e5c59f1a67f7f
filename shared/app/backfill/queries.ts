/** Reading and cancelling jobs: `GET /backfills`, `GET /backfills/{id}`, `DELETE /backfills/{id}`. */
import { type JobView, jobView } from '../../domain/backfill/progress';
import { transition } from '../../domain/backfill/state';
import { SluiceError } from '../../domain/errors';
import type { BackfillDeps } from './deps';
import { decodePageToken } from './job-index';
import { JobStore } from './job-store';
import { finishPlanning } from './resume';

const ID = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * The job's state and progress, or undefined when there is no such job. A job found in `planning` is
 * finished first (tasks enqueued, then `running`): that repairs a planner that crashed between storing the
 * job and enqueueing, and is harmless while a live planner is still at it (both steps are idempotent).
 */
export async function getBackfill(deps: BackfillDeps, id: string): Promise<JobView | undefined> {
  if (!ID.test(id)) return undefined;
  const jobs = new JobStore(deps.store, deps.config.pipeline);
  const stored = await jobs.read(id);
  if (!stored) return undefined;
  const job = await finishPlanning(deps, jobs, stored);
  return jobView(job, await jobs.listDone(id), deps.now());
}

/** Page size of `GET /backfills` when none is asked for. */
export const DEFAULT_BACKFILL_PAGE_SIZE = 50;

/** One page of jobs, newest first, and the token of the next page when there is one. */
export interface BackfillPage {
  backfills: JobView[];
  nextPageToken?: string;
}

/**
 * One page of jobs, newest first, from the jobs' index (ADR-2308): one listing of the index, then per job of
 * the page its object and its done markers — never the objects of the other jobs. `pageToken` is a
 * `nextPageToken` of an earlier page; one that is not is refused (`invalid-input`, naming the field).
 */
export async function listBackfills(
  deps: BackfillDeps,
  options: { pageSize?: number; pageToken?: string } = {},
): Promise<BackfillPage> {
  const jobs = new JobStore(deps.store, deps.config.pipeline);
  const storeToken = options.pageToken === undefined ? undefined : decodePageToken(options.pageToken);
  if (options.pageToken !== undefined && storeToken === undefined)
    throw new SluiceError('invalid-input', 'pageToken: not a nextPageToken of an earlier GET /backfills');
  const page = await jobs.index.page(options.pageSize ?? DEFAULT_BACKFILL_PAGE_SIZE, storeToken);
  const views = await Promise.all(
    page.ids.map(async (id) => {
      const stored = await jobs.read(id);
      if (!stored) return undefined;
      const job = await finishPlanning(deps, jobs, stored);
      return jobView(job, await jobs.listDone(job.id), deps.now());
    }),
  );
  const backfills = views.filter((v): v is JobView => v !== undefined);
  return { backfills, ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}) };
}

/**
 * Cancels a job: its remaining partition tasks become no-ops (workers check the state before reading and
 * every few batches). A finished job is left as it is. Undefined when there is no such job.
 */
export async function cancelBackfill(deps: BackfillDeps, id: string): Promise<JobView | undefined> {
  if (!ID.test(id)) return undefined;
  const jobs = new JobStore(deps.store, deps.config.pipeline);
  if (!(await jobs.read(id))) return undefined;
  const { job, changed } = await jobs.update(id, (j) => transition(j, { kind: 'cancelled', at: deps.now() }));
  if (changed) {
    deps.log.notice('backfill.cancelled', { job: id });
    await deps.snapshots.close(job.snapshot).catch(() => undefined);
    await deps.lineage?.report(job, 'ABORT', deps.now(), 'cancelled by an operator');
  }
  return jobView(job, await jobs.listDone(id), deps.now());
}
