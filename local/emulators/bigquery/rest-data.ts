/**
 * REST reads: `tabledata.list` and `jobs.query` / `jobs.getQueryResults` (and the jobs.insert / jobs.get
 * fallback path for query jobs), with BigQuery's JSON row encoding and page tokens.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, type Catalog, type Table } from './catalog';
import { runDdl } from './ddl';
import { type QueryParameter, type QueryResult, runQuery } from './query';
import { type Field, toRestFields } from './schema';
import { type Row, type TimestampFormat, toRestValue } from './values';

function restRows(rows: Row[], fields: Field[], ts: TimestampFormat): unknown[] {
  return rows.map((r) => ({ f: fields.map((f) => ({ v: toRestValue(r[f.name] ?? null, f, ts) })) }));
}

function page(
  total: number,
  params: URLSearchParams,
  defaultMax = 100_000,
): { start: number; end: number; next?: string } {
  const start = Number(params.get('pageToken') ?? params.get('startIndex') ?? '0') || 0;
  const max = Number(params.get('maxResults') ?? defaultMax) || defaultMax;
  const end = Math.min(total, start + max);
  return { start, end, ...(end < total ? { next: String(end) } : {}) };
}

function timestampFormat(get: (k: string) => unknown): TimestampFormat {
  const format = get('formatOptions.timestampOutputFormat');
  if (format === 'ISO8601_STRING') return 'ISO8601';
  if (
    format === 'INT64' ||
    get('formatOptions.useInt64Timestamp') === true ||
    get('formatOptions.useInt64Timestamp') === 'true'
  )
    return 'INT64';
  return 'FLOAT_SECONDS';
}

/** tabledata.list */
export function listTableData(table: Table, params: URLSearchParams): Record<string, unknown> {
  if (table.view) throw new ApiError(400, 'invalid', 'Cannot list a table of type VIEW.');
  const rows = table.rows();
  const selected =
    params
      .get('selectedFields')
      ?.split(',')
      .map((s) => s.trim()) ?? undefined;
  const fields = selected ? table.fields.filter((f) => selected.includes(f.name)) : table.fields;
  const { start, end, next } = page(rows.length, params);
  return {
    kind: 'bigquery#tableDataList',
    etag: `"${table.schemaVersion}-${rows.length}"`,
    totalRows: String(rows.length),
    ...(next ? { pageToken: next } : {}),
    rows: restRows(
      rows.slice(start, end),
      fields,
      timestampFormat((k) => params.get(k)),
    ),
  };
}

interface Job {
  id: string;
  projectId: string;
  query: string;
  result?: QueryResult;
  error?: ApiError;
  ts: TimestampFormat;
}

/** Completed query jobs, kept so getQueryResults can page through them. */
export class QueryJobs {
  private jobs = new Map<string, Job>();

  constructor(private readonly catalog: Catalog) {}

  private run(
    projectId: string,
    query: string,
    params: QueryParameter[],
    ts: TimestampFormat,
    jobId?: string,
  ): Job {
    const job: Job = { id: jobId ?? `job_${randomUUID().replace(/-/g, '')}`, projectId, query, ts };
    job.result = runDdl(this.catalog, projectId, query) ?? runQuery(this.catalog, projectId, query, params);
    this.jobs.set(job.id, job);
    return job;
  }

  private response(job: Job, params: URLSearchParams, kind: string): Record<string, unknown> {
    const result = job.result!;
    const { start, end, next } = page(result.rows.length, params);
    return {
      kind,
      jobReference: { projectId: job.projectId, jobId: job.id, location: 'US' },
      jobComplete: true,
      schema: { fields: toRestFields(result.fields) },
      totalRows: String(result.rows.length),
      rows: restRows(result.rows.slice(start, end), result.fields, job.ts),
      ...(next ? { pageToken: next } : {}),
      cacheHit: false,
    };
  }

  /** jobs.query */
  query(projectId: string, body: unknown): Record<string, unknown> {
    const b = (body ?? {}) as Record<string, unknown>;
    if (typeof b.query !== 'string') throw new ApiError(400, 'invalid', 'Missing required field: query');
    if (b.useLegacySql === true)
      throw new ApiError(400, 'invalidQuery', 'The emulator supports only GoogleSQL (useLegacySql: false)');
    const fmt = (b.formatOptions ?? {}) as Record<string, unknown>;
    const job = this.run(
      projectId,
      b.query,
      (b.queryParameters as QueryParameter[]) ?? [],
      timestampFormat((k) => fmt[k.replace('formatOptions.', '')]),
    );
    const params = new URLSearchParams(
      b.maxResults !== undefined ? { maxResults: String(b.maxResults) } : {},
    );
    return this.response(job, params, 'bigquery#queryResponse');
  }

  /** jobs.insert for a query configuration. */
  insert(projectId: string, body: unknown): Record<string, unknown> {
    const b = (body ?? {}) as {
      jobReference?: { jobId?: string };
      configuration?: { query?: Record<string, unknown> };
    };
    const q = b.configuration?.query;
    if (!q || typeof q.query !== 'string')
      throw new ApiError(400, 'invalid', 'The emulator runs only query jobs');
    const job = this.run(
      projectId,
      q.query,
      (q.queryParameters as QueryParameter[]) ?? [],
      'INT64',
      b.jobReference?.jobId,
    );
    return this.jobResource(job);
  }

  private jobResource(job: Job): Record<string, unknown> {
    return {
      kind: 'bigquery#job',
      id: `${job.projectId}:US.${job.id}`,
      jobReference: { projectId: job.projectId, jobId: job.id, location: 'US' },
      configuration: { query: { query: job.query, useLegacySql: false }, jobType: 'QUERY' },
      status: { state: 'DONE' },
      statistics: { query: { totalBytesProcessed: '0' } },
    };
  }

  private job(id: string): Job {
    const job = this.jobs.get(id);
    if (!job) throw new ApiError(404, 'notFound', `Not found: Job ${id}`);
    return job;
  }

  /** jobs.get */
  get(id: string): Record<string, unknown> {
    return this.jobResource(this.job(id));
  }

  /** jobs.getQueryResults */
  results(id: string, params: URLSearchParams): Record<string, unknown> {
    const job = this.job(id);
    job.ts =
      timestampFormat((k) => params.get(k)) === 'FLOAT_SECONDS'
        ? job.ts
        : timestampFormat((k) => params.get(k));
    return this.response(job, params, 'bigquery#getQueryResultsResponse');
  }
}
