/**
 * The `POST /backfills` request: its JSON schema, and the checks against the pipeline (table exists, is
 * watched by the stream, has the requested targets configured). Every problem becomes one line of a 400
 * answer; nothing is started unless the whole request is valid.
 */
import { z } from 'zod';
import type { ChangeStreamScope, TableSchema } from '../information-schema';
import { planReplica } from '../replica-plan';
import type { Timestamp } from '../timestamp';
import { describeIssues, timestampString } from '../zod-helpers';

/** Larger bodies are refused before parsing: a backfill names tables, it does not carry data. */
export const MAX_REQUEST_BYTES = 64 * 1024;

/** Sinks a backfill can load. */
export type BackfillTarget = 'replica' | 'history';

/** Spanner request priority of the partitioned reads. */
export type BackfillPriority = 'low' | 'medium' | 'high';

/** A source table: `T`, or `sch.T` for a table in a named schema (ADR-1405). */
const TABLE_NAME = /^(?:[A-Za-z_][A-Za-z0-9_]{0,127}\.)?[A-Za-z_][A-Za-z0-9_]{0,127}$/;

function unique<T>(items: T[]): boolean {
  return new Set(items).size === items.length;
}

const requestSchema = z.strictObject({
  tables: z
    .array(z.string().regex(TABLE_NAME, 'must be a table name (an identifier, or schema.table)'), {
      error: 'must be an array of table names',
    })
    .min(1, 'must name at least one table')
    .max(1000, 'must name at most 1000 tables')
    .refine(unique, 'must not repeat a table'),
  targets: z
    .array(z.enum(['replica', 'history'], 'must be "replica" or "history"'), {
      error: 'must be an array of "replica" and/or "history"',
    })
    .min(1, 'must name at least one target')
    .refine(unique, 'must not repeat a target')
    .optional(),
  readTimestamp: timestampString.optional(),
  dataBoost: z.boolean('must be true or false').optional(),
  priority: z.enum(['low', 'medium', 'high'], 'must be low, medium or high').optional(),
  maxPartitions: z
    .number('must be a whole number from 1 to 100000')
    .int('must be a whole number from 1 to 100000')
    .min(1, 'must be a whole number from 1 to 100000')
    .max(100_000, 'must be a whole number from 1 to 100000')
    .optional(),
});

/** A syntactically valid backfill request. */
export interface BackfillRequest {
  tables: string[];
  /** Omitted: every target configured for each table. */
  targets?: BackfillTarget[];
  /** Omitted: a strong read (T = now, chosen by Spanner). */
  readTimestamp?: Timestamp;
  dataBoost?: boolean;
  priority?: BackfillPriority;
  maxPartitions?: number;
}

/** The outcome of checking a request: the parsed value, or every problem, one readable line each. */
export type Checked<T> = { ok: true; value: T } | { ok: false; problems: string[] };

function isEmpty(body: unknown): boolean {
  if (body === undefined || body === null || body === '') return true;
  if (Buffer.isBuffer(body)) return body.length === 0;
  return typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0;
}

/** Decodes a body that arrived as text or bytes (no JSON content type); objects pass through. */
function decodeBody(body: unknown): Checked<unknown> {
  if (typeof body !== 'string' && !Buffer.isBuffer(body)) return { ok: true, value: body };
  try {
    return { ok: true, value: JSON.parse(body.toString()) };
  } catch {
    return { ok: false, problems: ['request body is not JSON'] };
  }
}

/**
 * Parses a `POST /backfills` body. `size` is the body's length in bytes when known (the raw body).
 * Empty and oversized bodies, unknown fields and bad values are each named.
 */
export function parseBackfillRequest(body: unknown, size?: number): Checked<BackfillRequest> {
  if (size !== undefined && size > MAX_REQUEST_BYTES) {
    return { ok: false, problems: [`request body is ${size} bytes; the limit is ${MAX_REQUEST_BYTES}`] };
  }
  if (isEmpty(body)) {
    return { ok: false, problems: ['request body is empty: expected JSON such as {"tables": ["Orders"]}'] };
  }
  const decoded = decodeBody(body);
  if (!decoded.ok) return decoded;
  if (typeof decoded.value !== 'object' || decoded.value === null || Array.isArray(decoded.value)) {
    return { ok: false, problems: ['request body must be a JSON object'] };
  }
  const parsed = requestSchema.safeParse(decoded.value);
  if (!parsed.success) return { ok: false, problems: describeIssues(parsed.error) };
  const { tables, targets, readTimestamp, dataBoost, priority, maxPartitions } = parsed.data;
  const value: BackfillRequest = { tables };
  if (targets) value.targets = targets;
  if (readTimestamp !== undefined) value.readTimestamp = readTimestamp;
  if (dataBoost !== undefined) value.dataBoost = dataBoost;
  if (priority) value.priority = priority;
  if (maxPartitions !== undefined) value.maxPartitions = maxPartitions;
  return { ok: true, value };
}

/** A table as the pipeline will load it: its schema, the columns read, and where each target goes. */
export interface ResolvedTable {
  name: string;
  schema: TableSchema;
  /** Key columns then watched columns, in table order: the projection of the mapped columns. */
  columns: string[];
  /** Non-key columns the stream watches (`all`, or their names), as the replica sink's schema needs. */
  watched: 'all' | string[];
  replica?: string;
  history?: string;
}

/** What the pipeline knows about its tables, to check a request against. */
export interface PipelineTables {
  /** The configured destinations of a source table (`SLUICE_TABLES`, with its all-tables rule). */
  configured: (table: string) => { replica?: string; history?: string } | undefined;
  /** The change stream's scope; tables it does not watch cannot hand over to it. */
  scope: ChangeStreamScope;
  streamName: string;
  /** Schemas of the requested tables that exist in the database. */
  schemas: Map<string, TableSchema>;
}

/** The replicated columns (the replica plan's: key, watched, stored generated), in the table's order. */
export function mappedColumns(schema: TableSchema, watched: 'all' | string[]): string[] {
  return [...planReplica(schema, watched).columns.keys()];
}

function resolveOne(
  name: string,
  targets: BackfillTarget[] | undefined,
  p: PipelineTables,
): Checked<ResolvedTable> {
  const schema = p.schemas.get(name);
  if (!schema)
    return { ok: false, problems: [`tables: unknown table ${name}: it does not exist in the database`] };
  const watched = p.scope.all ? { columns: 'all' as const } : p.scope.tables.get(name);
  if (!watched) {
    return { ok: false, problems: [`tables: table ${name} is not watched by change stream ${p.streamName}`] };
  }
  const configured = p.configured(name);
  if (!configured) {
    return {
      ok: false,
      problems: [`tables: table ${name} has no configured target (add it to SLUICE_TABLES)`],
    };
  }
  const resolved: ResolvedTable = {
    name,
    schema,
    columns: mappedColumns(schema, watched.columns),
    watched: watched.columns,
  };
  const problems: string[] = [];
  for (const target of targets ?? (['replica', 'history'] as const)) {
    const destination = configured[target];
    if (destination) resolved[target] = destination;
    else if (targets) problems.push(`targets: table ${name} has no configured ${target} table`);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: resolved };
}

/** Checks every requested table against the pipeline; all problems are reported together. */
export function resolveTables(request: BackfillRequest, pipeline: PipelineTables): Checked<ResolvedTable[]> {
  const tables: ResolvedTable[] = [];
  const problems: string[] = [];
  for (const name of request.tables) {
    const one = resolveOne(name, request.targets, pipeline);
    if (one.ok) tables.push(one.value);
    else problems.push(...one.problems);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: tables };
}
