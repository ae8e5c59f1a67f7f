/**
 * The reader's task: body schema (parsed with zod at the edge), deterministic task ids, and enqueueing.
 *
 * Ids are derived from the work — epoch, partition, position, and the writer token of the entry's last write —
 * so every producer of the same next window (the reader chaining it, the scheduler's tick, a concurrent tick)
 * names the same task and Cloud Tasks keeps one. The writer token changes with every write of the entry, so
 * after a failed attempt, or a lease that expired, the next task gets a new name: Cloud Tasks refuses a name
 * for a while after its task ran, and a dead task's name must not block the partition.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { formatTimestamp } from '../../../domain/timestamp';
import { timestampString } from '../../../domain/zod-helpers';
import type { TaskQueue } from '../../../ports/task-queue';

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

/** The task id of a window of `partition` after `position`, as of the entry's last write (`writer`). */
export function readerTaskId(task: ReaderTask, writer: string): string {
  const w = createHash('sha256').update(writer).digest('hex').slice(0, 12);
  return `e${task.epoch}-${task.partition}-${task.position.toString()}-${w}`;
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
  writer: string,
  options: { notBeforeMs?: number } = {},
): Promise<'created' | 'exists'> {
  return queue.enqueue({
    queue: 'reader',
    id: readerTaskId(task, writer),
    url,
    body: readerTaskBody(task),
    shardKey: task.partition,
    ...(options.notBeforeMs === undefined ? {} : { notBeforeMs: options.notBeforeMs }),
  });
}
