/** The reader function: a thin HTTP adapter registered with the functions framework. */
import { http } from '@google-cloud/functions-framework';
import { answerHealth, answerNotFound, type HttpRequest, type HttpResponse } from '../../shared/http/health';

/** Handles one HTTP request to the reader function. */
export function reader(req: HttpRequest, res: HttpResponse): void {
  if (answerHealth('reader', req, res)) return;
  answerNotFound(req, res);
}

http('reader', reader);
