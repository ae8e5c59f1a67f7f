/** Reading and cancelling jobs: `GET /backfills`, `GET /backfills/{id}`, `DELETE /backfills/{id}`. */
import { type JobView, jobView } from '../../domain/backfill/progress';
import { transition } from '../../domain/backfill/state';
import type { BackfillDeps } from './deps';
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

/** The most recent jobs, newest first. */
export async function listBackfills(deps: BackfillDeps, limit = 20): Promise<JobView[]> {
  const jobs = new JobStore(deps.store, deps.config.pipeline);
  const all = [];
  for (const id of await jobs.listIds()) {
    const job = await jobs.read(id);
    if (job) all.push(await finishPlanning(deps, jobs, job));
  }
  all.sort((a, b) => (a.createdAt > b.createdAt ? -1 : a.createdAt < b.createdAt ? 1 : 0));
  return Promise.all(
    all.slice(0, limit).map(async (job) => jobView(job, await jobs.listDone(job.id), deps.now())),
  );
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
