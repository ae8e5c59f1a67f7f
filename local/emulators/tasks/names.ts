/**
 * Resource names: `projects/P/locations/L/queues/Q` and `.../tasks/T`, with the character rules the
 * service enforces (queue ids `[A-Za-z0-9-]{1,100}`, task ids `[A-Za-z0-9_-]{1,500}`).
 */
import { randomInt } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { TasksError } from './wire';

const QUEUE = /^projects\/([^/]+)\/locations\/([^/]+)\/queues\/([A-Za-z0-9-]{1,100})$/;
const TASK =
  /^(projects\/[^/]+\/locations\/[^/]+\/queues\/[A-Za-z0-9-]{1,100})\/tasks\/([A-Za-z0-9_-]{1,500})$/;
const LOCATION = /^projects\/[^/]+\/locations\/[^/]+$/;

/** Checks a location name (`projects/P/locations/L`). */
export function parseLocation(name: string): string {
  if (!LOCATION.test(name))
    throw new TasksError(status.INVALID_ARGUMENT, `Invalid resource field value: ${name}`);
  return name;
}

/** Splits a queue name; throws INVALID_ARGUMENT when malformed. */
export function parseQueueName(name: string): { location: string; id: string } {
  const m = QUEUE.exec(name);
  if (!m) throw new TasksError(status.INVALID_ARGUMENT, `Invalid queue name: ${name}`);
  return { location: `projects/${m[1]}/locations/${m[2]}`, id: m[3] ?? '' };
}

/** Splits a task name into its queue name and task id; throws INVALID_ARGUMENT when malformed. */
export function parseTaskName(name: string): { queue: string; id: string } {
  const m = TASK.exec(name);
  if (!m) throw new TasksError(status.INVALID_ARGUMENT, `Invalid task name: ${name}`);
  return { queue: m[1] ?? '', id: m[2] ?? '' };
}

/** A system-generated task id: a long decimal number, like the service's. */
export function generatedTaskId(): string {
  let id = String(randomInt(1, 9));
  for (let i = 0; i < 18; i++) id += String(randomInt(0, 10));
  return id;
}

/** The last path segment (short queue or task id, as the `X-CloudTasks-*` headers carry it). */
export function shortId(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}
