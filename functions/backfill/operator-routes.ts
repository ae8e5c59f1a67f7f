/**
 * The operator routes of failures (ADR-1506): `POST /partitions/retry`, `GET /dead-letters` (the stream's
 * and the writer's, ADR-2203), `POST /dead-letters/replay`, `POST /dead-letters/discard` (ADR-2202) and
 * `POST /tables/forget` (ADR-1517). Each validates its input, names what is wrong in a JSON 400, and maps the use
 * cases' outcomes to HTTP; nothing here decides anything.
 */
import type { BackfillDeps } from '../../shared/app/backfill';
import { DeadLetterStore, LedgerStore, listDeadLetters } from '../../shared/app/ledger';
import {
  ForgetRefused,
  type ForgetRequest,
  forgetTables,
  PARTITION_ID,
  PartitionNotFound,
  replayDeadLetters,
  retryPartitions,
} from '../../shared/app/operator';
import { isDeadLetterId } from '../../shared/domain/dead-letter';
import { formatTimestamp } from '../../shared/domain/timestamp';
import { isWriterLetterId, WRITER_NOT_REPLAYABLE } from '../../shared/domain/writer/dead-letter-view';
import type { HttpRequest, HttpResponse } from '../../shared/http/health';
import { discard } from './discard-route';

/** The paths, with the methods each accepts (for 405 `Allow`). */
export const OPERATOR_ROUTES: Record<string, string[]> = {
  '/partitions/retry': ['POST'],
  '/dead-letters': ['GET'],
  '/dead-letters/replay': ['POST'],
  '/dead-letters/discard': ['POST'],
  '/tables/forget': ['POST'],
};

/** An answer: status, JSON body, headers (`Allow` on a 405). */
export type Answer = { status: number; body: unknown; headers?: Record<string, string> };

function bad(problems: string[]): Answer {
  return { status: 400, body: { error: { code: 400, message: problems.join('; '), problems } } };
}

/** A query parameter as one string: undefined when absent, an error when repeated or not a string. */
function queryParam(req: HttpRequest, name: string): string | undefined | Error {
  const v = req.query?.[name];
  if (v === undefined) return undefined;
  return typeof v === 'string' ? v : new Error(`query parameter ${name} must be given once, as text`);
}

async function retry(deps: BackfillDeps, req: HttpRequest): Promise<Answer> {
  const partition = queryParam(req, 'partition');
  if (partition instanceof Error) return bad([partition.message]);
  if (partition !== undefined && !PARTITION_ID.test(partition))
    return bad([
      `partition: "${partition}" is not a partition id (32 lowercase hex digits, as GET /status shows)`,
    ]);
  const ledger = new LedgerStore(deps.store, deps.config.pipeline, deps.log);
  try {
    const out = await retryPartitions(ledger, deps.log, partition ? { partition } : {});
    return { status: 200, body: out };
  } catch (err) {
    if (err instanceof PartitionNotFound)
      return { status: 404, body: { error: { code: 404, message: err.message } } };
    throw err;
  }
}

async function list(deps: BackfillDeps, req: HttpRequest): Promise<Answer> {
  const problems: string[] = [];
  const pageToken = queryParam(req, 'pageToken');
  const size = queryParam(req, 'pageSize');
  const table = queryParam(req, 'table');
  const state = queryParam(req, 'state');
  for (const p of [pageToken, size, table, state]) if (p instanceof Error) problems.push(p.message);
  if (typeof state === 'string' && !['pending', 'replayed', 'discarded'].includes(state))
    problems.push(`state: must be pending, replayed or discarded, saw "${state}"`);
  const pageSize = typeof size === 'string' ? Number(size) : 100;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000)
    problems.push(`pageSize: must be a whole number from 1 to 1000, saw "${String(size)}"`);
  if (problems.length > 0) return bad(problems);
  const letters = new DeadLetterStore(deps.store, deps.config.pipeline, {
    writerPrefix: deps.writerDeadLetterPrefix,
  });
  // Each letter is read for what finds the row: the stream's record key, column and commit timestamp, the
  // writer's table, key and origin.
  const page = await listDeadLetters(letters, {
    ...(typeof pageToken === 'string' ? { pageToken } : {}),
    pageSize,
  });
  // `table` and `state` narrow the page (the counts stay over every letter).
  if (typeof table === 'string') page.items = page.items.filter((i) => i.table === table);
  if (typeof state === 'string') page.items = page.items.filter((i) => i.state === state);
  const { calls: _calls, ...counts } = await letters.counts();
  return { status: 200, body: { ...page, counts } };
}

/** `{ "ids": [...] }`, `{ "table": "T" }` or an empty body (every pending letter). */
function replayRequest(body: unknown): { ids?: string[]; table?: string } | string[] {
  if (body === undefined || body === '' || (Buffer.isBuffer(body) && body.length === 0)) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return ['body: must be a JSON object such as {"ids": ["Orders/…"]} or {"table": "Orders"}, or empty'];
  const problems: string[] = [];
  const { ids, table, after, ...rest } = body as Record<string, unknown>;
  for (const k of Object.keys(rest)) problems.push(`${k}: unknown field (ids, table, after)`);
  if (after !== undefined && (typeof after !== 'string' || !isDeadLetterId(after)))
    problems.push('after: must be the "next" of an earlier replay answer (a dead-letter id)');
  if (ids !== undefined && (!Array.isArray(ids) || ids.length === 0 || ids.length > 100))
    problems.push('ids: must be a list of 1 to 100 dead-letter ids, as GET /dead-letters shows them');
  else if (Array.isArray(ids))
    for (const [i, id] of ids.entries())
      if (typeof id === 'string' && isWriterLetterId(id))
        problems.push(`ids[${i}]: ${id} is a writer dead letter: it ${WRITER_NOT_REPLAYABLE}`);
      else if (typeof id !== 'string' || !isDeadLetterId(id))
        problems.push(`ids[${i}]: ${JSON.stringify(id)} is not a dead-letter id`);
  if (table !== undefined && (typeof table !== 'string' || table === ''))
    problems.push('table: must be a source table name');
  if (problems.length > 0) return problems;
  return {
    ...(ids ? { ids: ids as string[] } : {}),
    ...(typeof table === 'string' ? { table } : {}),
    ...(typeof after === 'string' ? { after } : {}),
  };
}

async function replay(deps: BackfillDeps, req: HttpRequest): Promise<Answer> {
  const request = replayRequest(req.body);
  if (Array.isArray(request)) return bad(request);
  if (!deps.replay) {
    const message = 'this deployment cannot replay dead letters (no Spanner catalog is wired)';
    return { status: 503, body: { error: { code: 503, message } } };
  }
  const out = await replayDeadLetters(
    {
      deadLetters: new DeadLetterStore(deps.store, deps.config.pipeline, {
        writerPrefix: deps.writerDeadLetterPrefix,
      }),
      seal: deps.replay.seal,
      replica: deps.replica,
      catalog: deps.replay.catalog,
      tables: deps.replay.tables,
      now: deps.now,
      log: deps.log,
      ...(deps.enrichments ? { enrichments: deps.enrichments } : {}),
    },
    request,
  );
  const count = (o: string) => out.results.filter((r) => r.outcome === o).length;
  const summary = {
    replayed: count('replayed'),
    failed: count('failed'),
    untrusted: count('untrusted'),
    alreadyReplayed: count('already-replayed'),
    discarded: count('discarded'),
  };
  return {
    status: 200,
    body: { ...summary, more: out.more, ...(out.next ? { next: out.next } : {}), results: out.results },
  };
}

/** `{ "table": "Orders", "targets"?: ["replica" | "history", …] }`; a list of problems otherwise. */
function forgetRequest(body: unknown): ForgetRequest | string[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return [
      'body: must be a JSON object such as {"table": "Orders"} or {"table": "Orders", "targets": ["replica"]}',
    ];
  const problems: string[] = [];
  const { table, targets, ...rest } = body as Record<string, unknown>;
  for (const k of Object.keys(rest)) problems.push(`${k}: unknown field (table, targets)`);
  if (typeof table !== 'string' || table === '') problems.push('table: must be a source table name');
  const valid = (t: unknown) => t === 'replica' || t === 'history';
  if (
    targets !== undefined &&
    (!Array.isArray(targets) ||
      targets.length === 0 ||
      !targets.every(valid) ||
      new Set(targets).size < targets.length)
  )
    problems.push(
      `targets: must be a non-empty list of "replica" and/or "history", saw ${JSON.stringify(targets)}`,
    );
  if (problems.length > 0) return problems;
  return { table: table as string, ...(targets ? { targets: targets as ForgetRequest['targets'] } : {}) };
}

async function forget(deps: BackfillDeps, req: HttpRequest): Promise<Answer> {
  const request = forgetRequest(req.body);
  if (Array.isArray(request)) return bad(request);
  const ledger = new LedgerStore(deps.store, deps.config.pipeline, deps.log);
  try {
    const ports = { ledger, rules: deps.config, catalog: deps.catalog, log: deps.log };
    const out = await forgetTables(ports, request, formatTimestamp(deps.now()));
    const next =
      'retry the failed partitions (POST /partitions/retry): the next ensure creates the table empty';
    return { status: 200, body: { ...out, next } };
  } catch (err) {
    if (err instanceof ForgetRefused) return bad([err.message]);
    throw err;
  }
}

/** Handles an operator route; undefined when the path is not one of them. */
export async function operatorRoute(deps: BackfillDeps, req: HttpRequest): Promise<Answer | undefined> {
  const methods = OPERATOR_ROUTES[req.path];
  if (!methods) return undefined;
  if (!methods.includes(req.method)) {
    const message = `${req.method} is not allowed on ${req.path}; use ${methods.join(', ')}`;
    return { status: 405, body: { error: { code: 405, message } }, headers: { Allow: methods.join(', ') } };
  }
  if (req.path === '/partitions/retry') return retry(deps, req);
  if (req.path === '/dead-letters') return list(deps, req);
  if (req.path === '/tables/forget') return forget(deps, req);
  if (req.path === '/dead-letters/discard') return discard(deps, req);
  return replay(deps, req);
}
