/** The scheduler function: a thin HTTP adapter registered with the functions framework. */
import { http } from '@google-cloud/functions-framework';
import { answerHealth, answerNotFound, type HttpRequest, type HttpResponse } from '../../shared/http/health';

/** Handles one HTTP request to the scheduler function. */
export function scheduler(req: HttpRequest, res: HttpResponse): void {
  if (answerHealth('scheduler', req, res)) return;
  answerNotFound(req, res);
}

http('scheduler', scheduler);
