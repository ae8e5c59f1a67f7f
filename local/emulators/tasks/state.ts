/**
 * The emulator's queues, tasks and task-name tombstones. A task name stays reserved for `tombstoneMs`
 * after the task completes, fails for good or is deleted (about an hour in production), so a second
 * CreateTask with that name answers ALREADY_EXISTS: the de-duplication the pipeline relies on.
 */
import { status } from '@grpc/grpc-js';
import { defaultQueue, type QueueConfig } from './queue';
import type { TaskOutcome, TaskState } from './task';
import { TasksError } from './wire';

/** A queue and its live (queued or in-flight) tasks. */
export interface QueueEntry {
  config: QueueConfig;
  tasks: Map<string, TaskState>;
}

/** How many finished tasks the admin history keeps. */
const HISTORY_LIMIT = 10_000;

/** All state. */
export class TasksState {
  readonly queues = new Map<string, QueueEntry>();
  private readonly tombstones = new Map<string, number>();
  /** Every task seen, live or finished, in creation order (bounded), for inspection. */
  readonly history = new Map<string, TaskState>();

  /** Called after every change (persistence). */
  onChange?: () => void;

  constructor(public tombstoneMs: number) {}

  /** Reports a change made directly to a queue or task (the dispatcher and the RPC handlers call this). */
  changed(): void {
    this.onChange?.();
  }

  /** Everything that must survive a restart: queues, live tasks and reserved names. */
  dump(): { queues: QueueConfig[]; tasks: TaskState[]; tombstones: Array<[string, number]> } {
    const queues = [...this.queues.values()];
    return {
      queues: queues.map((q) => q.config),
      tasks: queues.flatMap((q) => [...q.tasks.values()]),
      tombstones: [...this.tombstones.entries()],
    };
  }

  /** Restores a dump; a task that was in flight when the emulator stopped is queued again (at least once). */
  restore(d: ReturnType<TasksState['dump']>): void {
    for (const config of d.queues) this.queues.set(config.name, { config, tasks: new Map() });
    for (const t of d.tasks) {
      const task = t.outcome === 'in-flight' ? { ...t, outcome: 'queued' as const } : t;
      this.queues.get(task.queue)?.tasks.set(task.name, task);
      this.history.set(task.name, task);
    }
    for (const [name, until] of d.tombstones) this.tombstones.set(name, until);
  }

  /** The queue, or NOT_FOUND. */
  queue(name: string): QueueEntry {
    const q = this.queues.get(name);
    if (!q) throw new TasksError(status.NOT_FOUND, `Queue does not exist. Queue: ${name}`);
    return q;
  }

  /** Creates a queue with `config` (defaults when omitted); ALREADY_EXISTS when present. */
  addQueue(config: QueueConfig = defaultQueue('')): QueueEntry {
    if (this.queues.has(config.name))
      throw new TasksError(status.ALREADY_EXISTS, `Queue already exists: ${config.name}`);
    const entry: QueueEntry = { config, tasks: new Map() };
    this.queues.set(config.name, entry);
    return entry;
  }

  /** Whether a task name is live or still reserved. */
  reserved(name: string, nowMs: number): boolean {
    const until = this.tombstones.get(name);
    if (until !== undefined && until <= nowMs) this.tombstones.delete(name);
    return this.tombstones.has(name) || this.liveTask(name) !== undefined;
  }

  /** The live task with this name, if any. */
  liveTask(name: string): TaskState | undefined {
    const queueName = name.slice(0, name.indexOf('/tasks/'));
    return this.queues.get(queueName)?.tasks.get(name);
  }

  /** Adds a new live task. */
  addTask(task: TaskState): void {
    this.queue(task.queue).tasks.set(task.name, task);
    this.history.set(task.name, task);
    if (this.history.size > HISTORY_LIMIT) {
      const oldest = this.history.keys().next().value;
      if (oldest !== undefined) this.history.delete(oldest);
    }
  }

  /** Removes a live task for good, reserving its name. */
  finish(task: TaskState, outcome: TaskOutcome, nowMs: number): void {
    task.outcome = outcome;
    this.queues.get(task.queue)?.tasks.delete(task.name);
    this.tombstones.set(task.name, nowMs + this.tombstoneMs);
  }

  /** Names still reserved (for inspection). */
  reservedNames(nowMs: number): string[] {
    return [...this.tombstones.keys()].filter((n) => this.reserved(n, nowMs));
  }
}
