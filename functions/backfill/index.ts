/** The backfill function: a thin HTTP adapter registered with the functions framework. */
import { http } from '@google-cloud/functions-framework';
import type { BackfillDeps } from '../../shared/app/backfill';
import { MAX_REQUEST_BYTES } from '../../shared/domain/backfill/request';
import { SluiceError } from '../../shared/domain/errors';
import { registerBodyLimit } from '../../shared/http/body-guard';
import { installJsonErrors, installJsonErrorsAtStart } from '../../shared/http/edge';
import { answerHealth, answerNotFound, type HttpRequest, type HttpResponse } from '../../shared/http/health';
import { backfillDeps, realAdapters } from '../../shared/wiring/backfill';
import { checkInstance, failFast } from '../../shared/wiring/startup';
import { handleBackfillRequest } from './routes';

let deps: BackfillDeps | undefined;

/** Dependencies are built on first use; the configuration they need was checked at instance start. */
function instanceDeps(): BackfillDeps {
  deps ??= backfillDeps(process.env, realAdapters).deps;
  return deps;
}

async function handle(req: HttpRequest, res: HttpResponse): Promise<void> {
  installJsonErrors(req);
  if (answerHealth('backfill', req, res)) return;
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
