/**
 * The scheduler function: `POST` from Cloud Scheduler runs one tick; `GET /status` answers the status object
 * the last tick wrote. A thin HTTP adapter over the application's {@link Scheduler}.
 */
import { http } from '@google-cloud/functions-framework';
import { SluiceError } from '../../shared/domain/errors';
import { registerBodyLimit } from '../../shared/http/body-guard';
import { answerMethodNotAllowed, installJsonErrors, installJsonErrorsAtStart } from '../../shared/http/edge';
import { answerHealth, type HttpRequest, type HttpResponse } from '../../shared/http/health';
import { type App, appOfInstance, stdoutLogger } from '../../shared/wiring/app';
import { checkInstance, failFast } from '../../shared/wiring/startup';

/** Builds the handler over an app provider (the instance's app in production, in-memory ports in tests). */
export function createSchedulerHandler(getApp: () => App) {
  return async (req: HttpRequest, res: HttpResponse): Promise<void> => {
    installJsonErrors(req);
    if (answerHealth('scheduler', req, res)) return;
    let app: App | undefined;
    try {
      app = getApp();
      if (req.method === 'GET' && req.path === '/status') {
        const status = await app.ledger.readStatus();
        res.status(200).json(status ?? { pipeline: app.settings.config.pipeline, state: 'uninitialised' });
        return;
      }
      if (req.method !== 'POST')
        return answerMethodNotAllowed(req, res, req.path === '/status' ? ['GET'] : ['POST']);
      const report = await app.scheduler.tick();
      res.status(200).json(report.status ?? { state: 'starting' });
    } catch (err) {
      const e = SluiceError.from(err);
      (app?.log ?? stdoutLogger()).error('scheduler.failed', e);
      // Cloud Scheduler retries per its job's policy; an operator reads the message.
      const status = e.kind === 'retryable' ? 503 : 500;
      res.status(status).json({ error: { kind: e.kind, message: e.message } });
    }
  };
}

/** Handles one HTTP request to the scheduler function; the configuration is checked when the instance starts. */
export const scheduler = failFast(checkInstance('scheduler'), createSchedulerHandler(appOfInstance));

// JSON error answers from the instance's very first request on (ADR-1514).
// Cloud Scheduler's body is empty or a few bytes (ADR-2302).
registerBodyLimit('scheduler', 64 * 1024);
installJsonErrorsAtStart();
http('scheduler', scheduler);
