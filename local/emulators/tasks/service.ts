/**
 * The `google.cloud.tasks.v2.CloudTasks` methods over the emulator's state. Each handler takes the decoded
 * request and returns the response message (or throws a TasksError); the server wraps them with fault
 * injection and gRPC plumbing.
 */
import { status } from '@grpc/grpc-js';
import type { Dispatcher } from './dispatcher';
import { generatedTaskId, parseLocation, parseQueueName, parseTaskName } from './names';
import { applyQueue, defaultQueue, parseQueue, queueResource } from './queue';
import type { TasksState } from './state';
import { parseTask, requestedName, type TaskLimits, type TaskState, taskResource } from './task';
import { nowMs, TasksError } from './wire';

/** A decoded request message. */
export type Req = Record<string, unknown>;
/** A method implementation. */
export type Handler = (req: Req) => unknown;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Offset-based paging; the token is the offset, opaque to clients. */
function page<T>(items: T[], req: Req): { items: T[]; nextPageToken: string } {
  const size = Math.min(Number(req['pageSize']) || 1000, 1000);
  const start = req['pageToken'] ? Number(Buffer.from(str(req['pageToken']), 'base64url').toString()) : 0;
  if (!Number.isInteger(start) || start < 0)
    throw new TasksError(status.INVALID_ARGUMENT, 'Invalid page token');
  const end = start + size;
  return {
    items: items.slice(start, end),
    nextPageToken: end < items.length ? Buffer.from(String(end)).toString('base64url') : '',
  };
}

/** The method table. */
export function handlers(
  state: TasksState,
  dispatcher: Dispatcher,
  limits: TaskLimits,
): Record<string, Handler> {
  return { ...queueHandlers(state, dispatcher), ...taskHandlers(state, dispatcher, limits) };
}

/** Queue methods (and the IAM ones, which act on queues). */
function queueHandlers(state: TasksState, dispatcher: Dispatcher): Record<string, Handler> {
  const queueOf = (req: Req) => state.queue(str(req['name']));
  const setPaused = (req: Req, paused: boolean) => {
    const q = queueOf(req);
    q.config = { ...q.config, paused };
    dispatcher.poke();
    return queueResource(q.config);
  };
  return {
    ListQueues: (req) => {
      const parent = parseLocation(str(req['parent']));
      const all = [...state.queues.values()].filter((q) => q.config.name.startsWith(`${parent}/queues/`));
      const p = page(
        all.map((q) => queueResource(q.config)),
        req,
      );
      return { queues: p.items, nextPageToken: p.nextPageToken };
    },
    GetQueue: (req) => queueResource(queueOf(req).config),
    CreateQueue: (req) => {
      const parent = parseLocation(str(req['parent']));
      const input = parseQueue(req['queue']);
      const name = str(input.name);
      if (parseQueueName(name).location !== parent) {
        throw new TasksError(status.INVALID_ARGUMENT, `Queue name ${name} is not in ${parent}`);
      }
      return queueResource(state.addQueue(applyQueue(defaultQueue(name), input)).config);
    },
    UpdateQueue: (req) => {
      const input = parseQueue(req['queue']);
      const name = str(input.name);
      parseQueueName(name);
      const existing = state.queues.get(name) ?? state.addQueue(defaultQueue(name));
      existing.config = applyQueue(existing.config, input, req['updateMask']);
      dispatcher.poke();
      return queueResource(existing.config);
    },
    DeleteQueue: (req) => {
      const q = queueOf(req);
      const now = nowMs();
      for (const t of [...q.tasks.values()]) state.finish(t, 'deleted', now);
      state.queues.delete(q.config.name);
      dispatcher.forget(q.config.name);
      return {};
    },
    PurgeQueue: (req) => {
      const q = queueOf(req);
      const now = nowMs();
      for (const t of [...q.tasks.values()]) state.finish(t, 'purged', now);
      q.config = { ...q.config, purgeTimeMs: now };
      return queueResource(q.config);
    },
    PauseQueue: (req) => setPaused(req, true),
    ResumeQueue: (req) => setPaused(req, false),
    GetIamPolicy: () => ({ version: 1, bindings: [], etag: Buffer.from('ACAB') }),
    SetIamPolicy: (req) => req['policy'] ?? {},
    TestIamPermissions: (req) => ({ permissions: req['permissions'] ?? [] }),
  };
}

/** Task methods. */
function taskHandlers(
  state: TasksState,
  dispatcher: Dispatcher,
  limits: TaskLimits,
): Record<string, Handler> {
  const liveTask = (name: string): TaskState => {
    parseTaskName(name);
    const task = state.liveTask(name);
    if (!task) throw new TasksError(status.NOT_FOUND, `Task does not exist or has finished: ${name}`);
    return task;
  };
  return {
    ListTasks: (req) => {
      const tasks = [...state.queue(str(req['parent'])).tasks.values()].sort(
        (a, b) => a.scheduleTimeMs - b.scheduleTimeMs || (a.name < b.name ? -1 : 1),
      );
      const p = page(tasks, req);
      return {
        tasks: p.items.map((t) => taskResource(t, req['responseView'])),
        nextPageToken: p.nextPageToken,
      };
    },
    GetTask: (req) => taskResource(liveTask(str(req['name'])), req['responseView']),
    CreateTask: (req) => {
      const parent = str(req['parent']);
      parseQueueName(parent);
      state.queue(parent);
      const now = nowMs();
      const wanted = requestedName(req['task']);
      if (wanted !== undefined && parseTaskName(wanted).queue !== parent) {
        throw new TasksError(status.INVALID_ARGUMENT, `Task name ${wanted} is not in queue ${parent}`);
      }
      const name = wanted ?? `${parent}/tasks/${generatedTaskId()}`;
      const task = parseTask(req['task'], name, parent, limits, now);
      if (state.reserved(name, now))
        throw new TasksError(status.ALREADY_EXISTS, 'Requested entity already exists');
      state.addTask(task);
      dispatcher.poke();
      return taskResource(task, req['responseView']);
    },
    DeleteTask: (req) => {
      const task = liveTask(str(req['name']));
      state.finish(task, 'deleted', nowMs());
      return {};
    },
    RunTask: (req) => {
      const task = liveTask(str(req['name']));
      dispatcher.runNow(task);
      return taskResource(task, req['responseView']);
    },
  };
}
