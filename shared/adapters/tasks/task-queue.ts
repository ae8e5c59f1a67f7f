/**
 * {@link TaskQueue} on Cloud Tasks: named tasks (ALREADY_EXISTS means the work is already queued or was done
 * within the de-duplication window — success), JSON bodies, an OIDC token for the target, and a schedule time
 * for delayed windows.
 */
import type { CloudTasksClient } from '@google-cloud/tasks';
import { shardIndex } from '../../domain/queue-shards';
import { checkTaskId, type EnqueueOutcome, type TaskQueue, type TaskRequest } from '../../ports/task-queue';

const ALREADY_EXISTS = 6;

/** Where tasks go and how they authenticate. */
export interface CloudTasksSettings {
  /**
   * Full queue names, `projects/<p>/locations/<l>/queues/<q>`; several for the reader spread its tasks over
   * them by their shard key (see queue-shards.ts).
   */
  queues: { reader: string | readonly string[]; backfill: string };
  /** Service account whose OIDC token the target receives; omitted locally. */
  oidcServiceAccount?: string;
  /** Dispatch deadline in seconds (Cloud Tasks allows 15–1800). */
  dispatchDeadlineSeconds: number;
}

/** Cloud Tasks implementation of the task queue. */
export class CloudTasksQueue implements TaskQueue {
  constructor(
    private readonly client: CloudTasksClient,
    private readonly settings: CloudTasksSettings,
  ) {}

  async enqueue(task: TaskRequest): Promise<EnqueueOutcome> {
    const parent = this.parentOf(task);
    const sa = this.settings.oidcServiceAccount;
    try {
      await this.client.createTask({
        parent,
        task: {
          name: `${parent}/tasks/${checkTaskId(task.id)}`,
          httpRequest: {
            httpMethod: 'POST',
            url: task.url,
            headers: { 'Content-Type': 'application/json' },
            body: Buffer.from(JSON.stringify(task.body)),
            ...(sa ? { oidcToken: { serviceAccountEmail: sa, audience: new URL(task.url).origin } } : {}),
          },
          dispatchDeadline: { seconds: this.settings.dispatchDeadlineSeconds },
          ...(task.notBeforeMs
            ? {
                scheduleTime: {
                  seconds: Math.floor(task.notBeforeMs / 1000),
                  nanos: (task.notBeforeMs % 1000) * 1e6,
                },
              }
            : {}),
        },
      });
      return 'created';
    } catch (err) {
      if ((err as { code?: unknown })?.code === ALREADY_EXISTS) return 'exists';
      throw err;
    }
  }

  private parentOf(task: TaskRequest): string {
    const named = this.settings.queues[task.queue];
    if (typeof named === 'string') return named;
    const shards = named as readonly string[];
    return shards[shards.length === 1 ? 0 : shardIndex(task.shardKey ?? task.id, shards.length)]!;
  }
}
