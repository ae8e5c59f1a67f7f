/** The backfill function: a thin HTTP adapter registered with the functions framework. */
import { http } from '@google-cloud/functions-framework';
import type { BackfillDeps } from '../../shared/app/backfill';
import { MAX_REQUEST_BYTES } from '../../shared/domain/backfill/request';
import { type CallerPolicy, callerRefusal, parseCallerPolicy } from '../../shared/domain/caller';
import { SluiceError } from '../../shared/domain/errors';
import { registerBodyLimit } from '../../shared/http/body-guard';
import { installJsonErrors, installJsonErrorsAtStart } from '../../shared/http/edge';
import { answerHealth, answerNotFound, type HttpRequest, type HttpResponse } from '../../shared/http/health';
import { backfillDeps, realAdapters } from '../../shared/wiring/backfill';
import { checkInstance, failFast } from '../../shared/wiring/startup';
import { handleBackfillRequest, WORKER_PATH } from './routes';

let deps: BackfillDeps | undefined;
let callers: CallerPolicy | undefined;

/** The request's socket address is loopback (the local stack); never so behind Cloud Run's front end. */
function fromLoopback(req: HttpRequest): boolean {
  const address = (req as { socket?: { remoteAddress?: string } }).socket?.remoteAddress ?? '';
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/** The worker route admits only the tasks invoker, the operator routes only others (ADR-2306). */
function refuseCaller(req: HttpRequest, res: HttpResponse): boolean {
  callers ??= parseCallerPolicy(process.env);
  const routeClass = req.path === WORKER_PATH ? 'worker' : 'operator';
  const refused = callerRefusal(
    callers,
    { path: req.path, routeClass },
    {
      serverlessAuthorization: req.header('x-serverless-authorization'),
      authorization: req.header('authorization'),
      loopback: fromLoopback(req),
    },
  );
  if (!refused) return false;
  const { status, message, route, caller } = refused;
  res.status(status).json({ error: { code: status, message, route, caller } });
  return true;
}

/** Dependencies are built on first use; the configuration they need was checked at instance start. */
function instanceDeps(): BackfillDeps {
  deps ??= backfillDeps(process.env, realAdapters).deps;
  return deps;
}

async function handle(req: HttpRequest, res: HttpResponse): Promise<void> {
  installJsonErrors(req);
  if (answerHealth('backfill', req, res)) return;
  if (refuseCaller(req, res)) return;
  let built: BackfillDeps;
  try {
    built = instanceDeps();
  } catch (err) {
    const error = SluiceError.from(err, 'backfill function setup');
    res.status(500).json({ error: { code: 500, message: error.message } });
    return;
  }
  if (!(await handleBackfillRequest(built, req, res))) answerNotFound(req, res);
}

/** Handles one HTTP request to the backfill function; the configuration is checked when the instance starts. */
export const backfill = failFast(checkInstance('backfill'), handle);

// JSON error answers from the instance's very first request on (ADR-1514).
registerBodyLimit('backfill', MAX_REQUEST_BYTES);
installJsonErrorsAtStart();
http('backfill', backfill);
