/** The backfill function: a thin HTTP adapter registered with the functions framework. */
import { http } from '@google-cloud/functions-framework';
import { answerHealth, answerNotFound, type HttpRequest, type HttpResponse } from '../../shared/http/health';

/** Handles one HTTP request to the backfill function. */
export function backfill(req: HttpRequest, res: HttpResponse): void {
  if (answerHealth('backfill', req, res)) return;
  answerNotFound(req, res);
}

http('backfill', backfill);
