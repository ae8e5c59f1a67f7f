/**
 * The BigQuery REST endpoint (v2 subset). Paths are served both under `/bigquery/v2` (client `apiEndpoint`)
 * and at the root (`BIGQUERY_EMULATOR_HOST` without the suffix). Errors use Google's JSON error format.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import { type FaultInjector, sleep } from '../common/faults';
import { errorMessage, jsonErrorBody, type LoopbackServer, listenOnLoopback } from '../common/json-http';
import { ApiError, type Catalog } from './catalog';
import {
  datasetResource,
  insertDataset,
  insertTable,
  listTables,
  patchTable,
  tableResource,
} from './rest-catalog';
import { listTableData, QueryJobs } from './rest-data';
import type { WriteStreams } from './write-streams';

/** A started REST server. */
export type RestServer = LoopbackServer;

type Handler = (m: string[], body: unknown, query: URLSearchParams, headers: IncomingHttpHeaders) => unknown;

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  404: 'NOT_FOUND',
  409: 'ALREADY_EXISTS',
  412: 'FAILED_PRECONDITION',
  500: 'INTERNAL',
};

function routes(
  catalog: Catalog,
  streams: WriteStreams,
  jobs: QueryJobs,
): Array<[string, RegExp, string, Handler]> {
  const ref = (m: string[]) => ({ projectId: m[1]!, datasetId: m[2]!, tableId: m[3]! });
  const P = '^/projects/([^/]+)';
  // tables.patch and tables.update: the emulator applies both as a patch of the given fields.
  const updateTable: Handler = (m, b, _q, h) => {
    const table = catalog.table(ref(m));
    const out = patchTable(table, b, ifMatch(h));
    catalog.tableChanged(table);
    return out;
  };
  return [
    ['POST', new RegExp(`${P}/datasets$`), 'datasets.insert', (m, b) => insertDataset(catalog, m[1]!, b)],
    [
      'GET',
      new RegExp(`${P}/datasets$`),
      'datasets.list',
      (m) => ({ kind: 'bigquery#datasetList', datasets: catalog.listDatasets(m[1]!).map(datasetResource) }),
    ],
    [
      'GET',
      new RegExp(`${P}/datasets/([^/]+)$`),
      'datasets.get',
      (m) => datasetResource(catalog.dataset(m[1]!, m[2]!)),
    ],
    [
      'DELETE',
      new RegExp(`${P}/datasets/([^/]+)$`),
      'datasets.delete',
      (m, _b, q) => {
        for (const t of catalog.dataset(m[1]!, m[2]!).tables.values())
          if (q.get('deleteContents') === 'true') streams.dropTable(t);
        catalog.deleteDataset(m[1]!, m[2]!, q.get('deleteContents') === 'true');
        return undefined;
      },
    ],
    [
      'POST',
      new RegExp(`${P}/datasets/([^/]+)/tables$`),
      'tables.insert',
      (m, b) => insertTable(catalog, m[1]!, m[2]!, b),
    ],
    [
      'GET',
      new RegExp(`${P}/datasets/([^/]+)/tables$`),
      'tables.list',
      (m) => listTables(catalog, m[1]!, m[2]!),
    ],
    [
      'GET',
      new RegExp(`${P}/datasets/([^/]+)/tables/([^/]+)$`),
      'tables.get',
      (m) => tableResource(catalog.table(ref(m))),
    ],
    ['PATCH', new RegExp(`${P}/datasets/([^/]+)/tables/([^/]+)$`), 'tables.patch', updateTable],
    ['PUT', new RegExp(`${P}/datasets/([^/]+)/tables/([^/]+)$`), 'tables.update', updateTable],
    [
      'DELETE',
      new RegExp(`${P}/datasets/([^/]+)/tables/([^/]+)$`),
      'tables.delete',
      (m) => {
        streams.dropTable(catalog.table(ref(m)));
        catalog.deleteTable(ref(m));
        return undefined;
      },
    ],
    [
      'GET',
      new RegExp(`${P}/datasets/([^/]+)/tables/([^/]+)/data$`),
      'tabledata.list',
      (m, _b, q) => listTableData(catalog.table(ref(m)), q),
    ],
    ['POST', new RegExp(`${P}/queries$`), 'jobs.query', (m, b) => jobs.query(m[1]!, b)],
    [
      'GET',
      new RegExp(`${P}/queries/([^/]+)$`),
      'jobs.getQueryResults',
      (m, _b, q) => jobs.results(m[2]!, q),
    ],
    ['POST', new RegExp(`${P}/jobs$`), 'jobs.insert', (m, b) => jobs.insert(m[1]!, b)],
    ['GET', new RegExp(`${P}/jobs/([^/]+)$`), 'jobs.get', (m) => jobs.get(m[2]!)],
  ];
}

/** The `If-Match` etag of a request, if it sent one (the client sends the etag of a read-modify-write). */
function ifMatch(headers: IncomingHttpHeaders): string | undefined {
  const value = headers['if-match'];
  return Array.isArray(value) ? value[0] : value;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(400, 'parseError', 'Parse Error: request body is not JSON');
  }
}

function errorBody(err: ApiError): unknown {
  const item = err.reason === 'invalidQuery' ? { location: 'q', locationType: 'parameter' } : undefined;
  return jsonErrorBody(err, { status: STATUS[err.status] ?? 'UNKNOWN', item });
}

/** Starts the REST server on 127.0.0.1. Fault rules apply per route key (e.g. `tables.get`, `jobs.query`). */
export async function startRestServer(
  catalog: Catalog,
  streams: WriteStreams,
  faults: FaultInjector,
  port: number,
): Promise<RestServer> {
  const table = routes(catalog, streams, new QueryJobs(catalog));
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname.replace(/^\/bigquery\/v2(?=\/)/, '');
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
      res.end(value === undefined ? '' : JSON.stringify(value));
    };
    const handle = async () => {
      const body = await readBody(req);
      for (const [method, re, key, fn] of table) {
        const m = re.exec(path);
        if (!m || method !== req.method) continue;
        const fault = faults.take(key);
        await sleep(fault?.delayMs ?? 0);
        if (fault?.code) throw new ApiError(fault.code, 'backendError', fault.message ?? 'Injected failure');
        const value = fn(
          m.map((s) => decodeURIComponent(s ?? '')),
          body,
          url.searchParams,
          req.headers,
        );
        return send(value === undefined ? 204 : 200, value);
      }
      throw new ApiError(404, 'notFound', `Not found: ${req.method} ${url.pathname}`);
    };
    handle().catch((err: unknown) => {
      const api = err instanceof ApiError ? err : new ApiError(500, 'internalError', errorMessage(err));
      send(api.status, errorBody(api));
    });
  });
  return listenOnLoopback(server, port);
}
