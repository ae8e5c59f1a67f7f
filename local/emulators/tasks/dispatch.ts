/**
 * One dispatch attempt: the HTTP request Cloud Tasks makes for an HTTP-target task, with its body and
 * headers, the `X-CloudTasks-*` headers, `User-Agent: Google-Cloud-Tasks` and an OIDC bearer token when the
 * task asks for one. The outcome is the HTTP status, or a deadline / connection failure.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { shortId } from './names';
import { oidcToken } from './oidc';
import type { TaskState } from './task';

/** How an attempt ended. */
export interface AttemptResult {
  httpStatus?: number;
  failure?: 'deadline' | 'connection';
  message?: string;
}

/** Headers Cloud Tasks sets or overrides; a task cannot supply these itself. */
const RESERVED = /^(host|content-length|user-agent|x-cloudtasks-.*|x-google-.*|x-appengine-.*)$/i;

/** The request headers of attempt number `task.dispatchCount` (already counted). */
export function dispatchHeaders(task: TaskState, nowMs: number): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(task.http.headers)) if (!RESERVED.test(k)) headers[k] = v;
  // App Engine targets get the same information under X-AppEngine-* names, as the service sends it.
  const p = task.appEngine ? 'X-AppEngine' : 'X-CloudTasks';
  headers['User-Agent'] = task.appEngine
    ? 'AppEngine-Google; (+http://code.google.com/appengine)'
    : 'Google-Cloud-Tasks';
  headers[`${p}-QueueName`] = shortId(task.queue);
  headers[`${p}-TaskName`] = shortId(task.name);
  headers[`${p}-TaskRetryCount`] = String(task.dispatchCount - 1);
  headers[`${p}-TaskExecutionCount`] = String(task.responseCount);
  headers[`${p}-TaskETA`] = (task.scheduleTimeMs / 1000).toFixed(6);
  const previous = task.attempts[task.attempts.length - 2];
  if (previous?.httpStatus !== undefined)
    headers['X-CloudTasks-TaskPreviousResponse'] = String(previous.httpStatus);
  if (previous) headers['X-CloudTasks-TaskRetryReason'] = previous.message ?? 'unknown';
  const { oidc } = task.http;
  if (oidc)
    headers['Authorization'] =
      `Bearer ${oidcToken(oidc.serviceAccountEmail, oidc.audience ?? task.http.url, nowMs)}`;
  return headers;
}

/** Sends the request; settles with the outcome, never rejects. `signal` aborts it (emulator stop). */
export function sendAttempt(
  task: TaskState,
  headers: Record<string, string>,
  signal: AbortSignal,
  target: string = task.http.url,
): Promise<AttemptResult> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const url = new URL(target);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, {
      method: task.http.method,
      headers: { ...headers, 'Content-Length': String(task.http.body.length) },
      signal,
    });
    const timer = setTimeout(() => {
      settle({ failure: 'deadline', message: `dispatch deadline of ${task.dispatchDeadlineMs} ms exceeded` });
      req.destroy();
    }, task.dispatchDeadlineMs);
    timer.unref();
    req.on('response', (res: IncomingMessage) => {
      res.resume();
      res.on('end', () => settle({ httpStatus: res.statusCode ?? 500, message: `HTTP ${res.statusCode}` }));
      res.on('error', (err) => settle({ failure: 'connection', message: err.message }));
    });
    req.on('error', (err) => settle({ failure: 'connection', message: err.message }));
    req.end(task.http.body);
  });
}

/** The `google.rpc.Code` the service reports for an attempt's outcome. */
export function outcomeCode(result: AttemptResult): number {
  if (result.failure === 'deadline') return 4;
  if (result.failure === 'connection' || result.httpStatus === undefined) return 14;
  const s = result.httpStatus;
  if (s >= 200 && s < 300) return 0;
  const byStatus: Record<number, number> = {
    400: 3,
    401: 16,
    403: 7,
    404: 5,
    409: 10,
    429: 8,
    499: 1,
    501: 12,
    503: 14,
    504: 4,
  };
  return byStatus[s] ?? (s >= 500 ? 13 : 9);
}
