/**
 * Programmatic start of the Cloud Tasks emulator for tests: `startTasksEmulator({port: 0})` gives the gRPC
 * address, a ready-wired official `CloudTasksClient`, an admin handle (tasks and their attempts, faults,
 * queue set-up) and `stop()`.
 */

import { CloudTasksClient } from '@google-cloud/tasks';
import { startAdminServerIfAsked } from '../common/admin-http';
import { type ActiveFault, FaultInjector, type FaultRule, sleep } from '../common/faults';
import { servedOnLoopback } from '../common/grpc-clients';
import type { AttemptResult } from './dispatch';
import { Dispatcher } from './dispatcher';
import { parseQueueName } from './names';
import { TasksPersistence } from './persist';
import { applyQueue, defaultQueue, parseQueue, type QueueInput } from './queue';
import { startTasksGrpc } from './server';
import { handlers } from './service';
import { TasksState } from './state';
import type { AttemptInfo, TaskOutcome, TaskState } from './task';
import { nowMs } from './wire';

/** Start options. */
export interface TasksEmulatorOptions {
  /** gRPC port; 0 (default) picks a free one. */
  port?: number;
  /** Admin HTTP endpoint port (0 picks one); `false` (default) starts none. */
  adminPort?: number | false;
  /** Queues created at start (full names); config as the `Queue` message, e.g. `{rateLimits: {...}}`. */
  queues?: Array<string | QueueInput>;
  /** How long a finished or deleted task's name stays reserved (production: about an hour). */
  tombstoneMs?: number;
  /** Lowest accepted `dispatchDeadline` (production: 15 s); tests lower it to exercise timeouts quickly. */
  minDispatchDeadlineMs?: number;
  /** Keep queues, tasks and reserved names in this directory across restarts (default: in memory only). */
  dataDir?: string;
  /** Where App Engine tasks go (e.g. `http://127.0.0.1:8080`, the relative URI appended); unset, they fail. */
  appEngineUrl?: string;
}

/** What the admin handle reports per task. */
export interface TaskRecord {
  name: string;
  queue: string;
  outcome: TaskOutcome;
  url: string;
  scheduleTimeMs: number;
  dispatchCount: number;
  responseCount: number;
  attempts: AttemptInfo[];
}

/** Inspection and fault injection, in-process. */
export interface TasksAdmin {
  /**
   * Adds a fault rule. `method` is a gRPC method (`CreateTask`, ...), or `dispatch` to fail attempts
   * before they reach the target: `code` is then the HTTP status recorded, `drop` a lost connection.
   */
  fail(rule: FaultRule): number;
  clearFaults(id?: number): void;
  faults(): ActiveFault[];
  /** Creates (or reconfigures) a queue directly. */
  upsertQueue(name: string, config?: QueueInput): void;
  /** Every task seen (live and finished), optionally of one queue. */
  tasks(queue?: string): TaskRecord[];
  task(name: string): TaskRecord | undefined;
  /** Live tasks waiting for dispatch / with a request in flight. */
  queued(queue?: string): TaskRecord[];
  inFlight(queue?: string): TaskRecord[];
  /** Task names still reserved against re-creation. */
  reservedNames(): string[];
  /**
   * Points every live HTTP task whose URL starts with a move's `from` at its `to` instead (same path and
   * query; each task moved at most once, by the first move that matches), e.g. a restored `--data-dir` whose
   * targets moved to other ports; a task waiting to retry is due at once. Returns how many tasks moved.
   */
  retarget(moves: Array<[from: string, to: string]>): number;
  /** Resolves once no task is queued or in flight (rejects after `timeoutMs`). */
  idle(timeoutMs?: number): Promise<void>;
  /** Resolves once `predicate` holds (polled every 10 ms; rejects after `timeoutMs`). */
  waitFor(predicate: () => boolean, timeoutMs?: number): Promise<void>;
}

/** A running emulator. */
export interface TasksEmulator {
  /** `127.0.0.1:port` of the gRPC endpoint. */
  address: string;
  port: number;
  adminUrl?: string;
  /** A new official client pointed at the emulator (insecure channel, no auth). */
  client(): CloudTasksClient;
  admin: TasksAdmin;
  stop(): Promise<void>;
}

function record(t: TaskState): TaskRecord {
  return {
    name: t.name,
    queue: t.queue,
    outcome: t.outcome,
    url: t.http.url,
    scheduleTimeMs: t.scheduleTimeMs,
    dispatchCount: t.dispatchCount,
    responseCount: t.responseCount,
    attempts: t.attempts.map((a) => ({ ...a })),
  };
}

async function waitFor(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(10);
  }
}

function adminHandle(state: TasksState, dispatcher: Dispatcher, faults: FaultInjector): TasksAdmin {
  const all = (queue?: string) =>
    [...state.history.values()].filter((t) => !queue || t.queue === queue).map(record);
  return {
    fail: (rule) => faults.add(rule),
    clearFaults: (id) => faults.clear(id),
    faults: () => faults.list(),
    upsertQueue: (name, config = {}) => {
      parseQueueName(name);
      const entry = state.queues.get(name) ?? state.addQueue(defaultQueue(name));
      entry.config = applyQueue(entry.config, parseQueue({ ...config, name }));
      dispatcher.poke();
    },
    tasks: all,
    task: (name) => {
      const t = state.history.get(name);
      return t ? record(t) : undefined;
    },
    queued: (queue) => all(queue).filter((t) => t.outcome === 'queued'),
    inFlight: (queue) => all(queue).filter((t) => t.outcome === 'in-flight'),
    reservedNames: () => state.reservedNames(nowMs()),
    retarget: (moves) => {
      let changed = 0;
      for (const q of state.queues.values())
        for (const t of q.tasks.values()) {
          const move = moves.find(([from]) => from && t.http.url.startsWith(from));
          if (!move) continue;
          t.http.url = `${move[1]}${t.http.url.slice(move[0].length)}`;
          if (t.outcome === 'queued' && t.dispatchCount > 0)
            t.scheduleTimeMs = Math.min(t.scheduleTimeMs, nowMs());
          changed++;
        }
      if (changed) {
        state.changed();
        dispatcher.poke();
      }
      return changed;
    },
    idle: (timeoutMs) =>
      waitFor(
        () => [...state.queues.values()].every((q) => q.tasks.size === 0 || q.config.paused),
        timeoutMs,
      ),
    waitFor,
  };
}

/** A `dispatch` fault rule turned into an attempt outcome (undefined: dispatch for real). */
function dispatchFault(faults: FaultInjector) {
  return async (): Promise<AttemptResult | undefined> => {
    const fault = faults.take('dispatch');
    if (!fault) return undefined;
    if (fault.delayMs) await sleep(fault.delayMs);
    if (fault.drop) return { failure: 'connection', message: 'connection dropped (injected)' };
    if (fault.code !== undefined)
      return { httpStatus: fault.code, message: fault.message ?? `HTTP ${fault.code}` };
    return undefined;
  };
}

/** Starts the emulator on loopback. */
export async function startTasksEmulator(options: TasksEmulatorOptions = {}): Promise<TasksEmulator> {
  const state = new TasksState(options.tombstoneMs ?? 3_600_000);
  const persistence = options.dataDir ? new TasksPersistence(options.dataDir, state) : undefined;
  persistence?.load();
  const faults = new FaultInjector();
  const dispatcher = new Dispatcher(state, dispatchFault(faults), options.appEngineUrl);
  const admin = adminHandle(state, dispatcher, faults);
  for (const q of options.queues ?? []) {
    if (typeof q === 'string') admin.upsertQueue(q);
    else admin.upsertQueue(String(q.name), q);
  }
  state.changed();
  dispatcher.poke();
  const limits = { minDispatchDeadlineMs: options.minDispatchDeadlineMs ?? 15_000 };
  // Every RPC that returns has made its change; the state is saved before the next event-loop turn.
  const methods = Object.fromEntries(
    Object.entries(handlers(state, dispatcher, limits)).map(([name, h]) => [
      name,
      (req: Parameters<typeof h>[0]) => {
        const out = h(req);
        state.changed();
        return out;
      },
    ]),
  );
  const grpc = await startTasksGrpc(methods, faults, options.port ?? 0);
  const adminServer = await startAdminServerIfAsked(options.adminPort, faults, {
    'GET /tasks': (_body, url) => admin.tasks(url.searchParams.get('queue') ?? undefined),
    'GET /reserved': () => admin.reservedNames(),
  });
  const served = servedOnLoopback(grpc, adminServer, (o) => new CloudTasksClient(o));
  return {
    ...served,
    admin,
    stop: async () => {
      dispatcher.stop();
      persistence?.close();
      await served.stop();
    },
  };
}
