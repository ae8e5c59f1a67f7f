/**
 * The writer function: `POST /mutations` with `{"mutations": [...]}` or a Pub/Sub push envelope writes the
 * mutations to Spanner and answers per docs/writer.md. A thin HTTP adapter over the writer use case.
 */
import { http } from '@google-cloud/functions-framework';
import { httpStatusFor, SluiceError } from '../../shared/domain/errors';
import { createLogger } from '../../shared/domain/log';
import { answerHealth, answerNotFound, type HttpRequest, type HttpResponse } from '../../shared/http/health';
import { type WriterInstance, writerOfInstance } from '../../shared/wiring/writer';

/** The request as the functions framework passes it (Express adds `rawBody`). */
export type WriterHttpRequest = HttpRequest & { rawBody?: Buffer };

/** The body to parse: the framework's parsed JSON when there is one, else the raw bytes. */
function bodyOf(req: WriterHttpRequest): unknown {
  const parsed = req.body;
  const isParsed = typeof parsed === 'object' && parsed !== null && !Buffer.isBuffer(parsed);
  return isParsed ? parsed : (req.rawBody ?? parsed);
}

/** Builds the handler over a writer provider (the instance's writer in production, others in tests). */
export function createWriterHandler(getWriter: () => Promise<WriterInstance>) {
  return async (req: WriterHttpRequest, res: HttpResponse): Promise<void> => {
    if (answerHealth('writer', req, res)) return;
    if (req.method !== 'POST' || req.path !== '/mutations') return answerNotFound(req, res);
    let built: WriterInstance | undefined;
    try {
      built = await getWriter();
      const size = req.rawBody?.length ?? 0;
      if (size > built.config.maxBodyBytes) {
        res.status(413).json({
          error: {
            code: 413,
            message: `body of ${size} bytes is over the limit of ${built.config.maxBodyBytes}`,
          },
        });
        return;
      }
      const answer = await built.writer.handle(bodyOf(req));
      res.status(answer.status).json(answer.body);
    } catch (err) {
      const e = SluiceError.from(err, 'writer');
      (built?.log ?? createLogger((l) => process.stdout.write(`${l}\n`))).error('writer.failed', e);
      const status = httpStatusFor(e.kind, { rateLimited: e.rateLimited, audience: 'operator' });
      res.status(status).json({ error: { code: status, kind: e.kind, message: e.message } });
    }
  };
}

/** Handles one HTTP request to the writer function. */
export const writer = createWriterHandler(writerOfInstance);

http('writer', writer);
