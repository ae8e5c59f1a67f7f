/**
 * Tasks: parsing the client's `Task` (zod at the boundary, with the service's limits: 100 KB size, dispatch
 * deadline range, 30-day schedule horizon), the emulator's per-task state, and the `Task` resource.
 */
import { status } from '@grpc/grpc-js';
import { z } from 'zod';
import { fromMs, TasksError, toMs } from './wire';

/** The HTTP request a task makes when dispatched. */
export interface TaskHttp {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer;
  oidc?: { serviceAccountEmail: string; audience?: string };
}

/** One dispatch attempt as the `Attempt` message reports it. */
export interface AttemptInfo {
  scheduleTimeMs: number;
  dispatchTimeMs: number;
  responseTimeMs?: number;
  /** HTTP status of the answer; undefined for a timeout or dropped connection. */
  httpStatus?: number;
  /** gRPC code summarising the outcome (0 = OK). */
  code?: number;
  message?: string;
}

/** Lifecycle of a task as the admin handle reports it. */
export type TaskOutcome = 'queued' | 'in-flight' | 'succeeded' | 'failed' | 'deleted' | 'purged';

/** Where an App Engine task goes: its path and the routing it asked for. */
export interface AppEngineTarget {
  relativeUri: string;
  routing: { service?: string; version?: string; instance?: string };
}

/** A task as the emulator keeps it. */
export interface TaskState {
  name: string;
  queue: string;
  /** The request (for an App Engine task, `url` is empty: the emulator's App Engine URL is prepended). */
  http: TaskHttp;
  appEngine?: AppEngineTarget;
  createTimeMs: number;
  scheduleTimeMs: number;
  dispatchDeadlineMs: number;
  dispatchCount: number;
  responseCount: number;
  attempts: AttemptInfo[];
  outcome: TaskOutcome;
}

const MAX_TASK_BYTES = 100 * 1024;
const DAY_MS = 86_400_000;
const time = z
  .object({ seconds: z.union([z.string(), z.number()]).nullish(), nanos: z.number().nullish() })
  .nullish();

const taskSchema = z
  .object({
    name: z.string().nullish(),
    scheduleTime: time,
    dispatchDeadline: time,
    appEngineHttpRequest: z
      .object({
        httpMethod: z.string().nullish(),
        relativeUri: z.string().max(2083).nullish(),
        headers: z.record(z.string(), z.string()).nullish(),
        body: z.instanceof(Buffer).nullish(),
        appEngineRouting: z
          .object({
            service: z.string().nullish(),
            version: z.string().nullish(),
            instance: z.string().nullish(),
          })
          .nullish(),
      })
      .nullish(),
    httpRequest: z
      .object({
        url: z.string().min(1).max(2083),
        httpMethod: z.string().nullish(),
        headers: z.record(z.string(), z.string()).nullish(),
        body: z.instanceof(Buffer).nullish(),
        oidcToken: z
          .object({ serviceAccountEmail: z.string().nullish(), audience: z.string().nullish() })
          .nullish(),
        oauthToken: z.unknown().optional(),
      })
      .nullish(),
  })
  .loose();

/** Limits that tests may relax (production values by default). */
export interface TaskLimits {
  minDispatchDeadlineMs: number;
}

function bad(message: string): TasksError {
  return new TasksError(status.INVALID_ARGUMENT, message);
}

/** Builds the state of a new task from a CreateTask request's `task`. */
export function parseTask(
  value: unknown,
  name: string,
  queue: string,
  limits: TaskLimits,
  nowMs: number,
): TaskState {
  const parsed = taskSchema.safeParse(value ?? {});
  if (!parsed.success) throw bad(`Invalid task: ${parsed.error.message}`);
  const t = parsed.data;
  if (t.appEngineHttpRequest && t.httpRequest)
    throw bad('A task has either http_request or app_engine_http_request');
  const ae = t.appEngineHttpRequest;
  const relativeUri = ae ? ae.relativeUri || '/' : '';
  if (ae && !relativeUri.startsWith('/')) throw bad(`relative_uri must begin with "/": ${relativeUri}`);
  const req = t.httpRequest ?? (ae ? { ...ae, url: '', oidcToken: undefined } : undefined);
  if (!req) throw bad('Task must have an http_request or an app_engine_http_request');
  if (!ae && !/^https?:\/\//.test(req.url)) throw bad(`Invalid url: ${req.url}`);
  const method = !req.httpMethod || req.httpMethod === 'HTTP_METHOD_UNSPECIFIED' ? 'POST' : req.httpMethod;
  const body = req.body ?? Buffer.alloc(0);
  if (body.length > 0 && !['POST', 'PUT', 'PATCH'].includes(method))
    throw bad(`${method} tasks cannot have a body`);
  const headers = req.headers ?? {};
  const size =
    body.length + req.url.length + Object.entries(headers).reduce((n, [k, v]) => n + k.length + v.length, 0);
  if (size > MAX_TASK_BYTES) throw bad(`Task size too large: ${size} bytes (max ${MAX_TASK_BYTES})`);
  const deadline = toMs(t.dispatchDeadline) ?? 600_000;
  if (deadline < limits.minDispatchDeadlineMs || deadline > 1_800_000) {
    throw bad('dispatch_deadline must be between 15 seconds and 30 minutes');
  }
  const schedule = Math.max(toMs(t.scheduleTime) ?? nowMs, nowMs);
  if (schedule > nowMs + 30 * DAY_MS) throw bad('schedule_time is more than 30 days in the future');
  const oidc = req.oidcToken?.serviceAccountEmail
    ? {
        serviceAccountEmail: req.oidcToken.serviceAccountEmail,
        audience: req.oidcToken.audience || undefined,
      }
    : undefined;
  const routing = ae?.appEngineRouting ?? {};
  return {
    name,
    queue,
    http: { url: req.url, method, headers, body, oidc },
    ...(ae
      ? {
          appEngine: {
            relativeUri,
            routing: Object.fromEntries(
              Object.entries(routing).filter(([, v]) => v),
            ) as AppEngineTarget['routing'],
          },
        }
      : {}),
    createTimeMs: nowMs,
    scheduleTimeMs: Math.floor(schedule * 1000) / 1000,
    dispatchDeadlineMs: deadline,
    dispatchCount: 0,
    responseCount: 0,
    attempts: [],
    outcome: 'queued',
  };
}

/** The task name a CreateTask request asks for (undefined: the service picks one). */
export function requestedName(value: unknown): string | undefined {
  const name = typeof value === 'object' && value !== null && 'name' in value ? value.name : undefined;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

function attemptResource(a: AttemptInfo | undefined): Record<string, unknown> | undefined {
  if (!a) return undefined;
  return {
    scheduleTime: fromMs(a.scheduleTimeMs),
    dispatchTime: fromMs(a.dispatchTimeMs),
    responseTime: a.responseTimeMs !== undefined ? fromMs(a.responseTimeMs) : undefined,
    responseStatus: a.code !== undefined ? { code: a.code, message: a.message ?? '' } : undefined,
  };
}

/** The `Task` resource; the BASIC view leaves out the body, as the service does. */
export function taskResource(t: TaskState, view: unknown): Record<string, unknown> {
  const full = view === 'FULL';
  const { oidc } = t.http;
  const request = t.appEngine
    ? {
        appEngineHttpRequest: {
          httpMethod: t.http.method,
          appEngineRouting: t.appEngine.routing,
          relativeUri: t.appEngine.relativeUri,
          headers: t.http.headers,
          body: full ? t.http.body : undefined,
        },
      }
    : {
        httpRequest: {
          url: t.http.url,
          httpMethod: t.http.method,
          headers: t.http.headers,
          body: full ? t.http.body : undefined,
          oidcToken: oidc
            ? { serviceAccountEmail: oidc.serviceAccountEmail, audience: oidc.audience ?? '' }
            : undefined,
        },
      };
  return {
    name: t.name,
    ...request,
    scheduleTime: fromMs(t.scheduleTimeMs),
    createTime: fromMs(t.createTimeMs),
    dispatchDeadline: fromMs(t.dispatchDeadlineMs),
    dispatchCount: t.dispatchCount,
    responseCount: t.responseCount,
    firstAttempt: attemptResource(t.attempts[0]),
    lastAttempt: attemptResource(t.attempts[t.attempts.length - 1]),
    view: full ? 'FULL' : 'BASIC',
  };
}
