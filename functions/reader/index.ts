/**
 * The reader function: Cloud Tasks POSTs one reader task; the body is parsed with zod and the task run by the
 * application's {@link Reader}, whose outcome decides the status (2xx done or dropped, 503/429 retry).
 *
 * Malformed bodies: Cloud Tasks retries every non-2xx answer, 4xx included, until the queue's attempt limit.
 * A malformed body never becomes valid, so the first delivery is answered 400 (visible in the queue's
 * response-code metrics and the logs) and any redelivery (`X-CloudTasks-TaskRetryCount` ≥ 1) 200, logged at
 * ERROR: at most two attempts per bad task, whatever the queue's retry policy.
 */
import { http } from '@google-cloud/functions-framework';
import { readerTaskSchema } from '../../shared/app/replication/common';
import { SluiceError } from '../../shared/domain/errors';
import type { LogContext, Logger } from '../../shared/domain/log';
import { describeIssues } from '../../shared/domain/zod-helpers';
import { registerBodyLimit } from '../../shared/http/body-guard';
import { registerDirectHandler } from '../../shared/http/direct';
import { answerMethodNotAllowed, installJsonErrors, installJsonErrorsAtStart } from '../../shared/http/edge';
import { answerHealth, type HttpRequest, type HttpResponse } from '../../shared/http/health';
import { type App, appOfInstance, stdoutLogger } from '../../shared/wiring/app';
import { checkInstance, failFast } from '../../shared/wiring/startup';

function header(req: HttpRequest, name: string): string | undefined {
  return req.header(name) || undefined;
}

function bodyJson(body: unknown): unknown {
  if (Buffer.isBuffer(body)) body = body.toString('utf8');
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/** The task's ids from Cloud Tasks' headers, for every log line of the request. */
function taskContext(req: HttpRequest): LogContext & { retryCount: number } {
  const retryCount = Number(header(req, 'X-CloudTasks-TaskRetryCount') ?? '0') || 0;
  const name = header(req, 'X-CloudTasks-TaskName');
  const max = Number(process.env.SLUICE_TASK_MAX_ATTEMPTS ?? '');
  return {
    ...(name ? { task: name } : {}),
    attempt: retryCount + 1,
    ...(Number.isInteger(max) && max > 0 ? { maxAttempts: max } : {}),
    retryCount,
  };
}

/** Builds the handler over an app provider (the instance's app in production, in-memory ports in tests). */
export function createReaderHandler(getApp: () => App) {
  return async (req: HttpRequest, res: HttpResponse): Promise<void> => {
    installJsonErrors(req);
    if (answerHealth('reader', req, res)) return;
    if (req.method !== 'POST') return answerMethodNotAllowed(req, res, ['POST']);
    const { retryCount, ...context } = taskContext(req);
    let log: Logger = stdoutLogger().child(context);
    try {
      const app = getApp();
      log = app.log.child(context);
      const parsed = readerTaskSchema.safeParse(bodyJson(req.body));
      if (!parsed.success) {
        const message = `malformed reader task: ${describeIssues(parsed.error).join('; ')}`;
        log.error('task.malformed', new SluiceError('invalid-input', message), { retryCount });
        res.status(retryCount === 0 ? 400 : 200).json({ error: { kind: 'invalid-input', message } });
        return;
      }
      const task = parsed.data;
      log = log.child({ partition: task.partition });
      log.info('task.start', { retryCount });
      if (task.pipeline !== app.settings.config.pipeline) {
        log.warn('task.noop', { reason: `task of pipeline ${task.pipeline}` });
        res.status(200).json({ outcome: 'noop', detail: `not pipeline ${task.pipeline}` });
        return;
      }
      const outcome = await app.reader.run(task, log);
      res.status(outcome.status).json(outcome);
    } catch (err) {
      // Only the app's construction can throw here (the reader maps its own failures): a configuration error.
      const e = SluiceError.from(err);
      log.error('reader.failed', e);
      res.status(503).json({ error: { kind: e.kind, message: e.message } });
    }
  };
}

/** Handles one HTTP request to the reader function; the configuration is checked when the instance starts. */
export const reader = failFast(checkInstance('reader'), createReaderHandler(appOfInstance));

// JSON error answers from the instance's very first request on (ADR-1514).
// A reader task names a partition and a window: a few hundred bytes (ADR-2302).
registerBodyLimit('reader', 64 * 1024);
// Called before the framework's per-request domain when the process serves the reader (ADR-3001).
registerDirectHandler('reader', reader);
installJsonErrorsAtStart();
http('reader', reader);
