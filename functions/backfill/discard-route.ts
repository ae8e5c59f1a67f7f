/**
 * `POST /dead-letters/discard` (ADR-2202): `{"ids": [...]}` or `{"table": "T"}`, with an optional
 * `reason`. The discard records who asked: the caller's identity from the request (see {@link callerOf}).
 */
import type { BackfillDeps } from '../../shared/app/backfill';
import { DeadLetterStore } from '../../shared/app/ledger';
import { DiscardRefused, type DiscardRequest, discardDeadLetters } from '../../shared/app/operator';
import { tokenEmail } from '../../shared/domain/caller';
import { isDeadLetterId } from '../../shared/domain/dead-letter';
import { MAX_DISCARD_REASON } from '../../shared/domain/dead-letter-discard';
import { isWriterLetterId } from '../../shared/domain/writer/dead-letter-view';
import type { HttpRequest } from '../../shared/http/health';

type Answer = { status: number; body: unknown };

/**
 * Who is calling: the `email` claim of the identity token Cloud Run verified before the request reached the
 * function (`X-Serverless-Authorization` first, then `Authorization`, as the route check reads them,
 * ADR-2306), else IAP's `X-Goog-Authenticated-User-Email` (`accounts.google.com:` prefix removed), else
 * `local` (the local stack, which takes calls without a token).
 */
export function callerOf(req: HttpRequest): string {
  const email = tokenEmail(req.header('x-serverless-authorization') ?? req.header('authorization'));
  if (typeof email === 'string') return email;
  const iap = req.header('x-goog-authenticated-user-email');
  if (iap) return iap.replace(/^accounts\.google\.com:/, '');
  return 'local';
}

function idProblems(ids: unknown): string[] {
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > 100)
    return ['ids: must be a list of 1 to 100 dead-letter ids, as GET /dead-letters shows them'];
  return ids.flatMap((id, i) =>
    typeof id === 'string' && (isDeadLetterId(id) || isWriterLetterId(id))
      ? []
      : [`ids[${i}]: ${JSON.stringify(id)} is not a dead-letter id`],
  );
}

/** `{ "ids": [...] | "table": "T", "reason"?: "…" }`; a list of problems otherwise. */
export function discardRequest(body: unknown, by: string): DiscardRequest | string[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return [
      'body: must be a JSON object such as {"ids": ["Orders/…"]} or {"table": "Orders"}, with an optional "reason"',
    ];
  const { ids, table, reason, ...rest } = body as Record<string, unknown>;
  const problems = Object.keys(rest).map((k) => `${k}: unknown field (ids, table, reason)`);
  if ((ids === undefined) === (table === undefined))
    problems.push('give either ids (the letters to discard) or table (every pending letter of it)');
  if (ids !== undefined) problems.push(...idProblems(ids));
  if (table !== undefined && (typeof table !== 'string' || table === ''))
    problems.push('table: must be a source table name');
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > MAX_DISCARD_REASON))
    problems.push(`reason: must be text of at most ${MAX_DISCARD_REASON} characters`);
  if (problems.length > 0) return problems;
  return {
    by,
    ...(ids ? { ids: ids as string[] } : {}),
    ...(typeof table === 'string' ? { table } : {}),
    ...(typeof reason === 'string' && reason !== '' ? { reason } : {}),
  };
}

/** Handles `POST /dead-letters/discard`. */
export async function discard(deps: BackfillDeps, req: HttpRequest): Promise<Answer> {
  const request = discardRequest(req.body, callerOf(req));
  if (Array.isArray(request))
    return { status: 400, body: { error: { code: 400, message: request.join('; '), problems: request } } };
  try {
    const letters = new DeadLetterStore(deps.store, deps.config.pipeline, {
      writerPrefix: deps.writerDeadLetterPrefix,
    });
    const out = await discardDeadLetters({ deadLetters: letters, now: deps.now, log: deps.log }, request);
    return { status: 200, body: { ...out, by: request.by } };
  } catch (err) {
    if (err instanceof DiscardRefused)
      return { status: err.status, body: { error: { code: err.status, message: err.message } } };
    throw err;
  }
}
