/**
 * The backfill function's HTTP handler over a harness's in-memory pipeline, called as the functions
 * framework calls it: for the operator routes' tests.
 */
import { handleBackfillRequest } from '../../../functions/backfill/routes';
import type { BackfillDeps } from '../../../shared/app/backfill/deps';
import { TableRegistry } from '../../../shared/app/tables/table-registry';
import { createLogger } from '../../../shared/domain/log';
import type { SnapshotSource } from '../../../shared/ports/snapshot-source';
import { fakeResponse } from '../../functions/support/fakes';
import type { Harness } from './harness';

/** The backfill function's dependencies over the harness's ports (replay wired). */
export function depsOf(h: Harness): BackfillDeps {
  return {
    config: h.settings.config,
    store: h.store,
    queue: h.queue,
    snapshots: {} as SnapshotSource,
    catalog: h.catalog,
    replay: {
      catalog: h.catalog,
      tables: new TableRegistry(
        { catalog: h.catalog, replica: h.replica, history: h.history },
        h.settings.config,
        createLogger(() => undefined),
      ),
      seal: { key: h.deadLetterKey, trustUnsigned: false },
    },
    replica: h.replica,
    history: h.history,
    workerUrl: 'http://127.0.0.1:1/backfills/tasks',
    now: () => h.now,
    newId: () => 'job',
    log: createLogger(() => undefined),
  };
}

/** One request through the backfill function's HTTP handler; its status, JSON and headers. */
export async function call(
  h: Harness,
  method: string,
  path: string,
  opts: { query?: Record<string, unknown>; body?: unknown; type?: string; deps?: Partial<BackfillDeps> } = {},
) {
  const res = fakeResponse();
  const raw = typeof opts.body === 'string' ? Buffer.from(opts.body) : undefined;
  const headers: Record<string, string> = { 'content-type': opts.type ?? 'application/json' };
  const req = {
    method,
    path,
    body: opts.body,
    ...(raw ? { rawBody: raw } : {}),
    query: opts.query ?? {},
    header: (n: string) => headers[n.toLowerCase()],
  };
  await handleBackfillRequest({ ...depsOf(h), ...opts.deps }, req, res);
  return { status: res.code, json: res.body as Record<string, unknown>, headers: res.headers };
}
