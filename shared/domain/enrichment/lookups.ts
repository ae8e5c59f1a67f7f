/**
 * Enrichment lookups: a change row of a replicated (fact) table joined to the row of a dimension table by a
 * primary-key point read. The configuration names the dimension table, how fact columns map onto every
 * primary-key column of it, the columns to bring and their prefix, and the consistency mode; it is checked
 * against both tables' schemas at startup, each problem named, and resolved so keys are encoded in the
 * dimension table's declared primary-key order whatever order the mapping names them in.
 */
import { z } from 'zod';
import { type BigQueryField, bigQueryFieldOf } from '../bigquery-schema';
import type { SpannerType } from '../change-record';
import type { TableColumn, TableSchema } from '../information-schema';
import { formatSpannerType } from '../spanner-types';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const identifier = z.string().regex(IDENTIFIER, 'must be an identifier ([A-Za-z_][A-Za-z0-9_]*)');
/** A dimension table: `T`, or `sch.T` in a named schema. */
const tableName = z
  .string()
  .regex(
    /^(?:[A-Za-z_][A-Za-z0-9_]{0,127}\.)?[A-Za-z_][A-Za-z0-9_]{0,127}$/,
    'must be a table name ([A-Za-z_][A-Za-z0-9_]*, or schema.table for a table in a named schema)',
  );

/** The default prefix of a lookup's columns: the table in lower case, a named schema's `.` written `__`. */
export function defaultLookupPrefix(table: string): string {
  return `${table.toLowerCase().replace('.', '__')}_`;
}

/** The partial cache of a `latest` lookup (the connector's processing-time join). */
const cacheSchema = z.strictObject({
  maxSize: z.number().int().min(1).max(10_000_000).default(10_000),
  expireAfterWriteMs: z.number().int().min(1).max(86_400_000).default(60_000),
  cacheMissing: z.boolean().default(false),
});

/** One lookup as configured. */
export const lookupSchema = z
  .strictObject({
    table: tableName,
    /** Dimension primary-key column → fact column holding its value. */
    key: z.record(identifier, identifier),
    columns: z.array(identifier).min(1, 'must name at least one column to bring'),
    /** Prefix of the brought columns in BigQuery; default `<table in lower case>_`. */
    prefix: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'must be a column-name prefix')
      .optional(),
    mode: z.enum(['as-of-commit', 'latest'], 'must be as-of-commit or latest').default('as-of-commit'),
    cache: z
      .union([z.literal('full'), cacheSchema])
      .optional()
      .superRefine((c, ctx) => {
        if (c === 'full')
          ctx.addIssue({
            code: 'custom',
            message:
              'a full-table cache is not supported (it needs snapshot and refresh semantics): use a partial cache {maxSize, expireAfterWriteMs}',
          });
      }),
  })
  .superRefine((l, ctx) => {
    if (l.mode === 'as-of-commit' && l.cache !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['cache'],
        message: 'only a latest lookup has a cache: as-of-commit reads each row at its commit timestamp',
      });
  });

/** The lookups of one fact table. */
export const lookupsSchema = z.array(lookupSchema);

/** A lookup as configured (after defaults). */
export type LookupConfig = z.output<typeof lookupSchema>;

/** A lookup checked against the schemas. */
export interface ResolvedLookup {
  /** `<fact table>.lookups[<i>]`, for messages and counters. */
  id: string;
  factTable: string;
  dimension: string;
  /** In the dimension table's declared primary-key order. */
  key: Array<{ dimensionColumn: string; factColumn: string }>;
  /** Brought columns: dimension column → BigQuery column (prefixed), with the dimension column's type. */
  columns: Array<{ source: string; target: string; type: string; spannerType: SpannerType }>;
  mode: 'as-of-commit' | 'latest';
  cache: { maxSize: number; expireAfterWriteMs: number; cacheMissing: boolean } | undefined;
}

/** The outcome of a resolution: every lookup resolved, or every problem named. */
export type Resolution = { ok: true; lookups: ResolvedLookup[] } | { ok: false; problems: string[] };

function columnType(schema: TableSchema, name: string): string | undefined {
  const c = schema.columns.find((x) => x.name === name);
  return c ? formatSpannerType(c.type) : undefined;
}

function columnOf(schema: TableSchema, name: string): TableColumn | undefined {
  return schema.columns.find((x) => x.name === name);
}

function keyProblems(at: string, l: LookupConfig, fact: TableSchema, dim: TableSchema): string[] {
  const problems: string[] = [];
  const pk = dim.primaryKey;
  for (const column of pk)
    if (!(column in l.key))
      problems.push(
        `${at}.key: does not map primary-key column ${column} of ${dim.name} (key: ${pk.join(', ')})`,
      );
  for (const [dimColumn, factColumn] of Object.entries(l.key)) {
    if (!pk.includes(dimColumn)) {
      problems.push(
        `${at}.key.${dimColumn}: is not a primary-key column of ${dim.name} (key: ${pk.join(', ')})`,
      );
      continue;
    }
    const factType = columnType(fact, factColumn);
    const dimType = columnType(dim, dimColumn);
    if (factType === undefined)
      problems.push(`${at}.key.${dimColumn}: ${fact.name} has no column ${factColumn}`);
    else if (factType !== dimType)
      problems.push(
        `${at}.key.${dimColumn}: ${fact.name}.${factColumn} is ${factType} but ${dim.name}.${dimColumn} is ${dimType}`,
      );
  }
  return problems;
}

/**
 * Checks the lookups of `fact` against the schemas (`schemas` has every table that exists) and resolves
 * them; a target column that collides with a fact column or another lookup's is a problem too.
 */
export function resolveLookups(
  fact: TableSchema,
  lookups: LookupConfig[],
  schemas: ReadonlyMap<string, TableSchema>,
): Resolution {
  const problems: string[] = [];
  const resolved: ResolvedLookup[] = [];
  const taken = new Map(fact.columns.map((c) => [c.name.toLowerCase(), `${fact.name}.${c.name}`]));
  lookups.forEach((l, i) => {
    const at = `tables.${fact.name}.lookups[${i}]`;
    const dim = schemas.get(l.table);
    if (!dim) {
      problems.push(`${at}.table: dimension table ${l.table} does not exist`);
      return;
    }
    const before = problems.length;
    problems.push(...keyProblems(at, l, fact, dim));
    const prefix = l.prefix ?? defaultLookupPrefix(l.table);
    const columns = l.columns.flatMap((source, j) => {
      const column = columnOf(dim, source);
      if (column === undefined || column.hidden) {
        problems.push(`${at}.columns[${j}]: ${dim.name} has no column ${source}`);
        return [];
      }
      const type = formatSpannerType(column.type);
      const target = `${prefix}${source}`;
      const clash = taken.get(target.toLowerCase());
      if (clash)
        problems.push(`${at}.columns[${j}]: ${target} collides with ${clash}; choose another prefix`);
      taken.set(target.toLowerCase(), `${at} (${target})`);
      return [{ source, target, type, spannerType: column.type }];
    });
    if (problems.length > before) return;
    resolved.push({
      id: `${fact.name}.lookups[${i}]`,
      factTable: fact.name,
      dimension: dim.name,
      key: dim.primaryKey.map((c) => ({ dimensionColumn: c, factColumn: l.key[c]! })),
      columns,
      mode: l.mode,
      cache: l.mode === 'latest' ? cacheSchema.parse(l.cache === 'full' ? {} : (l.cache ?? {})) : undefined,
    });
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, lookups: resolved };
}

/**
 * The enriched columns of a table's lookups as source columns (nullable: a missing dimension row gives
 * NULL), in lookup then column order, placed after the fact table's own columns.
 */
export function enrichedColumns(lookups: readonly ResolvedLookup[], after = 0): TableColumn[] {
  let position = after;
  return lookups.flatMap((l) =>
    l.columns.map((c) => ({
      name: c.target,
      type: c.spannerType,
      nullable: true,
      ordinalPosition: ++position,
    })),
  );
}

/** The enriched columns as BigQuery fields of a history table (NULLABLE, arrays REPEATED). */
export function enrichedFields(lookups: readonly ResolvedLookup[]): BigQueryField[] {
  return enrichedColumns(lookups).map((c) => bigQueryFieldOf(c));
}

/** The problems of a failed resolution as one permanent-error message naming every lookup and field. */
export function lookupProblemsMessage(table: string, problems: readonly string[]): string {
  return `the lookups of table ${table} cannot be resolved (SLUICE_TABLES):\n  - ${problems.join('\n  - ')}`;
}
