/**
 * HTTP routes of the backfill function over the use cases: the operator API (`POST/GET/DELETE /backfills`,
 * `GET /status`, the failure routes of `operator-routes.ts`) and the worker route Cloud Tasks calls. Only maps requests and outcomes to HTTP.
 */
import { randomBytes } from 'node:crypto';
import type { BackfillDeps } from '../../shared/app/backfill';
import {
  cancelBackfill,
  DEFAULT_BACKFILL_PAGE_SIZE,
  decodePageToken,
  getBackfill,
  listBackfills,
  runPartition,
  startBackfill,
} from '../../shared/app/backfill';
import { parsePartitionTask } from '../../shared/domain/backfill/job';
import { parseBackfillRequest } from '../../shared/domain/backfill/request';
import { type Audience, httpStatusFor, SluiceError } from '../../shared/domain/errors';
import { formatSpannerType } from '../../shared/domain/spanner-types';
import { type TableTargets, targetsFor } from '../../shared/domain/table-rules';
import { formatTimestamp } from '../../shared/domain/timestamp';
import { answerMethodNotAllowed, decodeSegment } from '../../shared/http/edge';
import type { HttpRequest, HttpResponse } from '../../shared/http/health';
import { crossSiteRefusal } from '../../shared/http/same-origin';
import { consolePage } from './console-page';
import { operatorRoute } from './operator-routes';

/** Path of the worker route (the task URL is the function's URL plus this path). */
export const WORKER_PATH = '/backfills/tasks';

/** The request as the functions framework passes it (Express adds `rawBody`). */
export type BackfillHttpRequest = HttpRequest & { rawBody?: Buffer };

function problem(res: HttpResponse, status: number, message: string, problems?: string[]): void {
  res.status(status).json({ error: { code: status, message, ...(problems ? { problems } : {}) } });
}

async function postBackfill(deps: BackfillDeps, req: BackfillHttpRequest, res: HttpResponse): Promise<void> {
  const parsed = parseBackfillRequest(req.body, req.rawBody?.length);
  if (!parsed.ok) return problem(res, 400, parsed.problems.join('; '), parsed.problems);
  const started = await startBackfill(deps, parsed.value);
  if (!started.ok) return problem(res, 400, started.problems.join('; '), started.problems);
  const job = started.value;
  res.status(202).json({
    id: job.id,
    state: job.state,
    snapshotTimestamp: formatTimestamp(job.snapshot.readTimestamp),
    partitions: job.partitions,
    status: `/backfills/${job.id}`,
  });
}

async function runTask(deps: BackfillDeps, req: BackfillHttpRequest, res: HttpResponse): Promise<void> {
  const task = parsePartitionTask(req.body);
  const attempt = Number(req.header('x-cloudtasks-taskretrycount') ?? '0') + 1;
  deps.log.info('task.start', { job: task.job, partition: task.partition, retryCount: attempt - 1 });
  const outcome = await runPartition(deps, task);
  res.status(200).json(outcome);
}

/** The largest page `GET /backfills` serves: each job of a page costs a read and a listing of its markers. */
const MAX_BACKFILL_PAGE_SIZE = 100;

/** `GET /backfills?pageSize=&pageToken=`: one page, newest first, `nextPageToken` when there is more. */
async function listPage(deps: BackfillDeps, req: HttpRequest, res: HttpResponse): Promise<void> {
  const { pageSize: size, pageToken } = req.query ?? {};
  const problems: string[] = [];
  if (
    size !== undefined &&
    (typeof size !== 'string' ||
      !/^\d{1,4}$/.test(size) ||
      Number(size) < 1 ||
      Number(size) > MAX_BACKFILL_PAGE_SIZE)
  )
    problems.push(
      `pageSize: must be a whole number from 1 to ${MAX_BACKFILL_PAGE_SIZE}, saw ${JSON.stringify(size)}`,
    );
  if (pageToken !== undefined && (typeof pageToken !== 'string' || decodePageToken(pageToken) === undefined))
    problems.push('pageToken: must be the nextPageToken of an earlier GET /backfills answer');
  if (problems.length > 0) return problem(res, 400, problems.join('; '), problems);
  const page = await listBackfills(deps, {
    pageSize: size === undefined ? DEFAULT_BACKFILL_PAGE_SIZE : Number(size),
    ...(typeof pageToken === 'string' ? { pageToken } : {}),
  });
  res.status(200).json(page);
}

async function readStatus(deps: BackfillDeps, res: HttpResponse): Promise<void> {
  // Written by the scheduler each tick (ADR-201); absent until the pipeline's first tick.
  const object = await deps.store.read(`${deps.config.pipeline}/status.json`);
  if (!object) return problem(res, 404, 'no pipeline status yet: the scheduler has not written one');
  res.status(200).json(JSON.parse(object.data.toString('utf8')));
}

/** Express's response, which can send a page as well as JSON. */
interface PageResponse extends HttpResponse {
  set(field: string, value: string): unknown;
  send(body: string): unknown;
}

function sendConsole(deps: BackfillDeps, res: HttpResponse): void {
  const page = res as PageResponse;
  page.status(200);
  page.set('content-type', 'text/html; charset=utf-8');
  // The page talks only to this origin: no script, style or request may come from anywhere else.
  // Its script is served with a fresh nonce (no 'unsafe-inline'), and no other site may frame it (ADR-2301).
  const nonce = randomBytes(16).toString('base64');
  page.set(
    'content-security-policy',
    `default-src 'self'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; frame-ancestors 'none'; form-action 'none'; base-uri 'none'`,
  );
  page.set('x-frame-options', 'DENY');
  page.send(consolePage(deps.config.pipeline, undefined, nonce));
}

/** The configured tables, each with its source columns (the console's table panel). */
/**
 * The replicated source tables: the explicit entries of `SLUICE_TABLES`, and every table the last status
 * lists as replicated (the all-tables rule `"*"` resolves only against the stream's watched tables).
 */
async function replicatedTables(deps: BackfillDeps): Promise<Array<[string, TableTargets]>> {
  const out = new Map<string, TableTargets>(Object.entries(deps.config.tables));
  const object = await deps.store.read(`${deps.config.pipeline}/status.json`);
  const listed = object
    ? (JSON.parse(object.data.toString('utf8')) as { tables?: unknown }).tables
    : undefined;
  for (const t of Array.isArray(listed) ? listed : []) {
    const source = (t as { source?: unknown }).source;
    if (typeof source !== 'string' || out.has(source)) continue;
    const targets = targetsFor(deps.config, source);
    if (targets) out.set(source, targets);
  }
  return [...out].sort(([a], [b]) => a.localeCompare(b));
}

async function consoleTables(deps: BackfillDeps, res: HttpResponse): Promise<void> {
  const tables = await Promise.all(
    (await replicatedTables(deps)).map(async ([source, targets]) => {
      const base = { source, replica: targets.replica ?? null, history: targets.history ?? null };
      try {
        const schema = await deps.catalog.tableSchema(source);
        const columns = schema.columns.map((c) => ({
          name: c.name,
          type: formatSpannerType(c.type),
          nullable: c.nullable,
        }));
        return { ...base, primaryKey: schema.primaryKey, columns };
      } catch (err) {
        return { ...base, primaryKey: [], columns: [], error: SluiceError.from(err).message };
      }
    }),
  );
  res.status(200).json({ tables });
}

/** The operator API's paths and their methods (the failure routes add theirs), for 405 `Allow`. */
function allowedMethods(path: string): string[] | undefined {
  if (path === WORKER_PATH) return ['POST'];
  if (path === '/backfills') return ['GET', 'POST'];
  if (path === '/status' || path === '/' || path === '/console/tables') return ['GET'];
  if (/^\/backfills\/[^/]+$/.test(path)) return ['GET', 'DELETE'];
  return undefined;
}

async function route(deps: BackfillDeps, req: BackfillHttpRequest, res: HttpResponse): Promise<boolean> {
  const { method, path } = req;
  if (method === 'GET' && path === '/') {
    sendConsole(deps, res);
    return true;
  }
  if (method === 'GET' && path === '/console/tables') return consoleTables(deps, res).then(() => true);
  const refused = crossSiteRefusal(req);
  if (refused) return (problem(res, refused.status, refused.message), true);
  const answer = await operatorRoute(deps, req);
  if (answer) {
    for (const [name, value] of Object.entries(answer.headers ?? {})) res.set?.(name, value);
    res.status(answer.status).json(answer.body);
    return true;
  }
  const allowed = allowedMethods(path);
  if (allowed && !allowed.includes(method)) return (answerMethodNotAllowed(req, res, allowed), true);
  if (method === 'POST' && path === WORKER_PATH) return runTask(deps, req, res).then(() => true);
  if (method === 'POST' && path === '/backfills') return postBackfill(deps, req, res).then(() => true);
  if (method === 'GET' && path === '/backfills') return listPage(deps, req, res).then(() => true);
  if (method === 'GET' && path === '/status') return readStatus(deps, res).then(() => true);
  const m = /^\/backfills\/([^/]+)$/.exec(path);
  if (!m) return false;
  const id = decodeSegment(m[1]!);
  if (id === undefined) return (problem(res, 400, `bad percent-encoding in the backfill id "${m[1]}"`), true);
  const view = method === 'GET' ? await getBackfill(deps, id) : await cancelBackfill(deps, id);
  if (view) res.status(200).json(view);
  else problem(res, 404, `no backfill ${id}`);
  return true;
}

/**
 * Handles one request; resolves false when no route matches (the caller answers 404). Failures map through
 * the error classification: to Cloud Tasks only retryable ones are non-2xx; operators get REST statuses.
 */
export async function handleBackfillRequest(
  deps: BackfillDeps,
  req: BackfillHttpRequest,
  res: HttpResponse,
): Promise<boolean> {
  const audience: Audience = req.path === WORKER_PATH ? 'cloud-tasks' : 'operator';
  try {
    return await route(deps, req, res);
  } catch (err) {
    const error = SluiceError.from(err, `${req.method} ${req.path}`);
    deps.log.error('backfill.request-failed', error, { path: req.path });
    problem(res, httpStatusFor(error.kind, { rateLimited: error.rateLimited, audience }), error.message);
    return true;
  }
}
