/**
 * The writer function: `POST /mutations` with `{"mutations": [...]}` or a Pub/Sub push envelope writes the
 * mutations to Spanner and answers per docs/writer.md. A thin HTTP adapter over the writer use case.
 */
import { http } from '@google-cloud/functions-framework';
import { SluiceError } from '../../shared/domain/errors';
import { createLogger, type Logger } from '../../shared/domain/log';
import { DEFAULT_MAX_BODY_BYTES } from '../../shared/domain/writer/config';
import { registerBodyLimit } from '../../shared/http/body-guard';
import { registerDirectHandler } from '../../shared/http/direct';
import { answerMethodNotAllowed, installJsonErrors, installJsonErrorsAtStart } from '../../shared/http/edge';
import { answerHealth, answerNotFound, type HttpRequest, type HttpResponse } from '../../shared/http/health';
import { checkInstance, failFast } from '../../shared/wiring/startup';
import { type WriterInstance, writerOfInstance } from '../../shared/wiring/writer';

/** The request as the functions framework passes it (Express adds `rawBody`). */
export type WriterHttpRequest = HttpRequest & { rawBody?: Buffer };

/** The body to parse: the framework's parsed JSON when there is one, else the raw bytes. */
function bodyOf(req: WriterHttpRequest): unknown {
  const parsed = req.body;
  const isParsed = typeof parsed === 'object' && parsed !== null && !Buffer.isBuffer(parsed);
  return isParsed ? parsed : (req.rawBody ?? parsed);
}

/**
 * Leaves the per-request `domain` the functions framework runs each request in. While a domain is entered,
 * every async resource created is paired with it and entered and exited around each callback, which for the
 * thousands of stream events of a BatchWrite cost as much CPU as the write itself (the benchmark halved).
 * The writer needs no domain: it catches every failure itself, and the framework still catches a rejected
 * handler promise.
 */
function leaveRequestDomain(): void {
  (process as { domain?: { exit(): void } | null }).domain?.exit();
}

/** Builds the handler over a writer provider (the instance's writer in production, others in tests). */
export function createWriterHandler(getWriter: () => Promise<WriterInstance>) {
  return async (req: WriterHttpRequest, res: HttpResponse): Promise<void> => {
    installJsonErrors(req);
    if (answerHealth('writer', req, res)) return;
    if (req.path !== '/mutations') return answerNotFound(req, res);
    if (req.method !== 'POST') return answerMethodNotAllowed(req, res, ['POST']);
    leaveRequestDomain();
    let built: WriterInstance;
    try {
      built = await getWriter();
    } catch (err) {
      return fail(res, err, 'writer setup');
    }
    try {
      if (refuseNonJson(req, res, built.log)) return;
      const size = req.rawBody?.length ?? 0;
      if (size > built.config.maxBodyBytes) {
        const message = `body of ${size} bytes is over the limit of ${built.config.maxBodyBytes}`;
        built.log.warn('writer request rejected', {
          event: 'writer.rejected',
          status: 413,
          problems: [message],
        });
        res.status(413).json({ error: { code: 413, message } });
        return;
      }
      const answer = await built.writer.handle(bodyOf(req));
      res.status(answer.status).json(answer.body);
    } catch (err) {
      fail(res, err, 'writer', built.log);
    }
  };
}

/**
 * A body that is not `application/json` (curl's `-d` sends a form type, whose parser turns the JSON text into
 * a key): 415 naming the type to send, rather than a problem about a key nobody wrote.
 */
function refuseNonJson(req: WriterHttpRequest, res: HttpResponse, log: Logger): boolean {
  const type = (req.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'application/json') return false;
  const message = `send the body as application/json (saw "${type}")`;
  log.warn('writer request rejected', { event: 'writer.rejected', status: 415, problems: [message] });
  res.status(415).json({ error: { code: 415, message } });
  return true;
}

/**
 * A failure outside the writer's answers (it could not start, or Spanner could not be asked for the schema):
 * the service's fault, not the request's — 503 (429) when it may pass, 500 otherwise, never a 4xx that would
 * blame the producer.
 */
function fail(res: HttpResponse, err: unknown, what: string, log?: Logger): void {
  const e = SluiceError.from(err, what);
  const status = e.kind === 'retryable' ? (e.rateLimited ? 429 : 503) : 500;
  // `writer.failed` is what the writer-errors metric and its alert count (infra/log-contract.ts).
  (log ?? createLogger((l) => process.stdout.write(`${l}\n`))).error('writer request not handled', e, {
    event: 'writer.failed',
    status,
  });
  res.status(status).json({ error: { code: status, kind: e.kind, message: e.message } });
}

/** Handles one HTTP request to the writer function; the configuration is checked when the instance starts. */
export const writer = failFast(checkInstance('writer'), createWriterHandler(writerOfInstance));

// JSON error answers from the instance's very first request on (ADR-1514).
// Refused before parsing at the configured limit (ADR-2302); the configuration itself is checked at start.
registerBodyLimit('writer', () => {
  const configured = Number(process.env.SLUICE_WRITER_MAX_BODY_BYTES);
  return Number.isInteger(configured) && configured > 0 ? configured : DEFAULT_MAX_BODY_BYTES;
});
// Called before the framework's per-request domain when the process serves the writer (ADR-3001).
registerDirectHandler('writer', writer);
installJsonErrorsAtStart();
http('writer', writer);
