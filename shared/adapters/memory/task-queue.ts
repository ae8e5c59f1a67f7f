/** In-memory task queue with named-task de-duplication, for unit tests. */
import { checkTaskId, type EnqueueOutcome, type TaskQueue, type TaskRequest } from '../../ports/task-queue';

/** In-memory {@link TaskQueue}: remembers every id it has seen, like Cloud Tasks' tombstones. */
export class MemoryTaskQueue implements TaskQueue {
  private readonly seen = new Set<string>();
  /** Tasks not yet taken, in enqueue order. */
  readonly pending: TaskRequest[] = [];

  async enqueue(task: TaskRequest): Promise<EnqueueOutcome> {
    const key = `${task.queue}/${checkTaskId(task.id)}`;
    if (this.seen.has(key)) return 'exists';
    this.seen.add(key);
    this.pending.push(structuredClone(task));
    return 'created';
  }

  /** Removes and returns every pending task (a test's dispatcher). */
  drain(): TaskRequest[] {
    return this.pending.splice(0, this.pending.length);
  }
}
