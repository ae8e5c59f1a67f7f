/**
 * Task queue port: how the scheduler, readers and backfill hand work to Cloud Tasks.
 * Task names are deterministic, so a duplicate enqueue of the same work collapses into one task.
 */

/** One unit of work to deliver by HTTP POST with a JSON body. */
export interface TaskRequest {
  /** Which queue: readers' windows or backfill partitions. */
  queue: 'reader' | 'backfill';
  /** Task id: `[A-Za-z0-9_-]{1,500}`, derived from the work (e.g. partition + position + epoch). */
  id: string;
  /** Target URL of the function that runs the task. */
  url: string;
  /** JSON body. */
  body: unknown;
  /** Earliest dispatch time in epoch milliseconds (wall clock); omitted means now. */
  notBeforeMs?: number;
  /**
   * What picks the queue when the queue is sharded over several (the partition of a reader task): every task
   * with the same key goes to the same queue, so equal ids still collapse into one task.
   */
  shardKey?: string;
}

/** Outcome of an enqueue: a new task, or one with the same id already existed (success either way). */
export type EnqueueOutcome = 'created' | 'exists';

/** The operations the pipeline uses. Implementations: in-memory, and Cloud Tasks. */
export interface TaskQueue {
  enqueue(task: TaskRequest): Promise<EnqueueOutcome>;
}

const TASK_ID = /^[A-Za-z0-9_-]{1,500}$/;

/** Validates a task id against Cloud Tasks' rule; throws naming the id when it breaks it. */
export function checkTaskId(id: string): string {
  if (!TASK_ID.test(id)) throw new Error(`invalid task id ${JSON.stringify(id)}: use 1-500 of [A-Za-z0-9_-]`);
  return id;
}
