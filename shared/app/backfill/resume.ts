/**
 * The end of planning, shared by the planner and by the repair of a job found in `planning`: enqueue one
 * task per partition, then move the job to `running`. Both steps are idempotent (task ids are named after
 * the partition, the transition is compare-and-swap), so a planner and a repairer may run them at once.
 * A stored job always has all its partitions (they are written before it), so any job in `planning` can be
 * finished this way — that is how a crash between storing the job and enqueueing is repaired.
 */
import { type BackfillJob, partitionTaskId } from '../../domain/backfill/job';
import { transition } from '../../domain/backfill/state';
import type { BackfillDeps } from './deps';
import type { JobStore } from './job-store';

const ENQUEUE_CONCURRENCY = 16;

/** Enqueues one task per partition of the job (a repeat collapses into the existing task). */
export async function enqueuePartitions(deps: BackfillDeps, job: BackfillJob): Promise<void> {
  for (let i = 0; i < job.partitions; i += ENQUEUE_CONCURRENCY) {
    const batch = Array.from({ length: Math.min(ENQUEUE_CONCURRENCY, job.partitions - i) }, (_, k) => i + k);
    await Promise.all(
      batch.map((index) =>
        deps.queue.enqueue({
          queue: 'backfill',
          id: partitionTaskId(job.id, index),
          url: deps.workerUrl,
          body: { pipeline: job.pipeline, job: job.id, partition: index },
        }),
      ),
    );
  }
}

/**
 * Finishes planning: enqueue, then `running` (or straight to `succeeded` with no partition). Tasks that
 * arrive before the transition find the job still planning and are retried by the queue. Returns the job
 * as stored afterwards; a job no longer in `planning` is returned as it is.
 */
export async function finishPlanning(
  deps: BackfillDeps,
  jobs: JobStore,
  job: BackfillJob,
): Promise<BackfillJob> {
  if (job.state !== 'planning') return job;
  await enqueuePartitions(deps, job);
  const at = deps.now();
  let current = (await jobs.update(job.id, (j) => transition(j, { kind: 'planned', at }))).job;
  if (current.partitions === 0) {
    current = (await jobs.update(job.id, (j) => transition(j, { kind: 'all-partitions-done', at }))).job;
  }
  return current;
}
