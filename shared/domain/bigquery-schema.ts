/**
 * Spanner column type → BigQuery field schema, for both dialects. The choices where BigQuery has no exact
 * counterpart (PG NUMERIC, FLOAT32, UUID, INTERVAL, PROTO, ENUM, arrays) are recorded in docs/ARCHITECTURE.md.
 */
import type { SpannerType } from './change-record';
import { SluiceError } from './errors';
import { exactKeyColumn, needsExactKey } from './exact-keys';
import { formatSpannerType } from './spanner-types';

/** BigQuery standard SQL type names accepted by tables.insert and the Storage Write adapters. */
export type BigQueryType =
  | 'STRING'
  | 'BYTES'
  | 'INT64'
  | 'FLOAT64'
  | 'NUMERIC'
  | 'BIGNUMERIC'
  | 'BOOL'
  | 'TIMESTAMP'
  | 'DATE'
  | 'JSON';

/** One field of a BigQuery table schema (REST shape). */
export interface BigQueryField {
  name: string;
  type: BigQueryType;
  mode: 'NULLABLE' | 'REQUIRED' | 'REPEATED';
}

const SCALARS: Record<string, BigQueryType> = {
  BOOL: 'BOOL',
  INT64: 'INT64',
  FLOAT32: 'FLOAT64',
  FLOAT64: 'FLOAT64',
  NUMERIC: 'NUMERIC',
  STRING: 'STRING',
  BYTES: 'BYTES',
  DATE: 'DATE',
  TIMESTAMP: 'TIMESTAMP',
  JSON: 'JSON',
  UUID: 'STRING',
  INTERVAL: 'STRING',
  PROTO: 'BYTES',
  ENUM: 'INT64',
};

/**
 * The BigQuery type of a scalar Spanner type (of the element, for arrays).
 * @throws Error naming the type when it has no mapping.
 */
export function bigQueryTypeOf(type: SpannerType): BigQueryType {
  if (type.code === 'ARRAY' && type.arrayElementType) return bigQueryTypeOf(type.arrayElementType);
  // PostgreSQL NUMERIC has arbitrary precision; BIGNUMERIC (76 digits, scale 38) holds what fits.
  if (type.code === 'NUMERIC' && type.typeAnnotation === 'PG_NUMERIC') return 'BIGNUMERIC';
  const mapped = SCALARS[type.code];
  if (!mapped)
    throw new SluiceError('permanent', `no BigQuery type for Spanner type ${formatSpannerType(type)}`);
  return mapped;
}

const RESERVED_PREFIXES = [
  '_CHANGE_',
  '_PARTITION',
  '_TABLE_',
  '_FILE_',
  '_ROW_TIMESTAMP',
  '__ROOT__',
  '_COLIDENTIFIER',
];

/** @throws Error when BigQuery reserves the column name. */
export function assertColumnNameAllowed(name: string): void {
  const upper = name.toUpperCase();
  if (RESERVED_PREFIXES.some((p) => upper.startsWith(p))) {
    throw new SluiceError(
      'permanent',
      `column ${name} cannot be replicated: BigQuery reserves names starting with ${upper.slice(0, 8)}`,
    );
  }
}

/** The field for one column. Arrays are REPEATED (a NULL array is written as empty: BigQuery has no NULL array). */
export function bigQueryFieldOf(column: {
  name: string;
  type: SpannerType;
  nullable: boolean;
}): BigQueryField {
  assertColumnNameAllowed(column.name);
  const type = bigQueryTypeOf(column.type);
  const mode = column.type.code === 'ARRAY' ? 'REPEATED' : column.nullable ? 'NULLABLE' : 'REQUIRED';
  return { name: column.name, type, mode };
}

/**
 * Schema of a replica table: every column in ordinal order, and the primary key BigQuery CDC needs. Only key
 * columns keep NOT NULL as REQUIRED: a CDC DELETE row carries the key alone, so a REQUIRED non-key column
 * would make BigQuery refuse every delete. Each TIMESTAMP key column `K` is followed by its exact companion
 * `K__ns` (STRING, nine fractional digits), and both are in the primary key (ADR-1402).
 */
export function replicaTableSchema(table: {
  name: string;
  columns: { name: string; type: SpannerType; nullable: boolean }[];
  primaryKey: string[];
}): { fields: BigQueryField[]; primaryKey: string[] } {
  // A table that cannot have a replica stays that way: permanent, never retried.
  if (table.primaryKey.length === 0)
    throw new SluiceError('permanent', `table ${table.name} has no primary key`);
  const keys = new Set(table.primaryKey);
  const exact = new Set(
    table.columns.filter((c) => keys.has(c.name) && needsExactKey(c.type)).map((c) => c.name),
  );
  const fields: BigQueryField[] = [];
  for (const c of table.columns) {
    fields.push(bigQueryFieldOf({ ...c, nullable: c.nullable || !keys.has(c.name) }));
    if (!exact.has(c.name)) continue;
    const companion = exactKeyColumn(c.name);
    if (table.columns.some((o) => o.name.toLowerCase() === companion.toLowerCase()))
      throw new SluiceError(
        'permanent',
        `table ${table.name} has a column ${companion}, the name the replica needs for the exact value of its TIMESTAMP key ${c.name}`,
      );
    fields.push({ name: companion, type: 'STRING', mode: 'REQUIRED' });
  }
  const primaryKey = table.primaryKey.flatMap((k) => (exact.has(k) ? [k, exactKeyColumn(k)] : [k]));
  if (primaryKey.length > 16) {
    throw new SluiceError(
      'permanent',
      `table ${table.name} needs ${primaryKey.length} replica key columns (${primaryKey.join(', ')}); BigQuery CDC allows 16`,
    );
  }
  return { fields, primaryKey };
}
