/**
 * The reader's task: body schema (parsed with zod at the edge), deterministic task ids, and enqueueing.
 *
 * Ids are derived from the work — epoch, partition, position — so every producer of the same next window (the
 * reader chaining it, the scheduler's tick, a concurrent tick) names the same task and Cloud Tasks keeps one.
 * A takeover of an expired lease adds the lease's expiry, because the task that held it used the plain id and
 * Cloud Tasks refuses a name again for a while after its task ran.
 */
import { z } from 'zod';
import { formatTimestamp, type Timestamp } from '../domain/timestamp';
import { timestampString } from '../domain/zod-helpers';
import type { TaskQueue } from '../ports/task-queue';

/** The body of a reader task. */
export const readerTaskSchema = z.strictObject({
  pipeline: z.string().min(1),
  epoch: z.number().int().min(0),
  partition: z.string().regex(/^[0-9a-f]{32}$/, 'must be a partition id (32 hex digits)'),
  /** The position the producer saw; a task older than the entry's position is stale. */
  position: timestampString,
});

/** A parsed reader task. */
export type ReaderTask = z.output<typeof readerTaskSchema>;

/** The task id of a window of `partition` starting after `position`. */
export function readerTaskId(task: ReaderTask, takeoverOf?: Timestamp): string {
  const base = `e${task.epoch}-${task.partition}-${task.position.toString()}`;
  return takeoverOf === undefined ? base : `${base}-x${takeoverOf.toString()}`;
}

/** JSON body of a task (timestamps as RFC 3339). */
export function readerTaskBody(task: ReaderTask): Record<string, unknown> {
  return { ...task, position: formatTimestamp(task.position) };
}

/** Enqueues a reader task; a duplicate id is success ("exists"). */
export async function enqueueReaderTask(
  queue: TaskQueue,
  url: string,
  task: ReaderTask,
  options: { notBeforeMs?: number; takeoverOf?: Timestamp } = {},
): Promise<'created' | 'exists'> {
  return queue.enqueue({
    queue: 'reader',
    id: readerTaskId(task, options.takeoverOf),
    url,
    body: readerTaskBody(task),
    ...(options.notBeforeMs === undefined ? {} : { notBeforeMs: options.notBeforeMs }),
  });
}
