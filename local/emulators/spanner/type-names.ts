/**
 * Spanner's type names, one table per dialect, shared by the DDL column parser (`types.ts`), the query
 * parser's casts and typed literals (`sql/parse-type.ts`) and the printers of both. PostgreSQL accepts more
 * names in a cast than in a column definition (`integer`, `int4`, `smallint`, `float`, `oid`): Spanner's
 * PostgreSQL DDL takes only the names its supported-types table lists, while casts follow PostgreSQL's own
 * aliases (reference: spanner PostgreSQL data types, "Supported PostgreSQL data types").
 */
import type { SpannerTypeJson } from './hooks';

/** GoogleSQL scalar type names without a length, as both DDL and queries spell them. */
export const GSQL_SCALAR_NAMES = [
  'INT64',
  'FLOAT64',
  'FLOAT32',
  'BOOL',
  'DATE',
  'TIMESTAMP',
  'NUMERIC',
  'JSON',
  'UUID',
] as const;

/** A PostgreSQL type name: the wire type it means, and whether a column definition may use it. */
interface PgName {
  type: SpannerTypeJson;
  ddl: boolean;
}

const pg = (type: SpannerTypeJson, ddl = true): PgName => ({ type, ddl });

/** PostgreSQL type names (upper case, words joined by one space) → wire type. */
const PG_NAMES: Record<string, PgName> = {
  BIGINT: pg({ code: 'INT64' }),
  INT8: pg({ code: 'INT64' }),
  INT: pg({ code: 'INT64' }, false),
  INT4: pg({ code: 'INT64' }, false),
  INTEGER: pg({ code: 'INT64' }, false),
  SMALLINT: pg({ code: 'INT64' }, false),
  FLOAT8: pg({ code: 'FLOAT64' }),
  'DOUBLE PRECISION': pg({ code: 'FLOAT64' }),
  FLOAT: pg({ code: 'FLOAT64' }, false),
  REAL: pg({ code: 'FLOAT32' }),
  FLOAT4: pg({ code: 'FLOAT32' }),
  BOOLEAN: pg({ code: 'BOOL' }),
  BOOL: pg({ code: 'BOOL' }),
  TEXT: pg({ code: 'STRING' }),
  VARCHAR: pg({ code: 'STRING' }),
  'CHARACTER VARYING': pg({ code: 'STRING' }),
  BYTEA: pg({ code: 'BYTES' }),
  DATE: pg({ code: 'DATE' }),
  TIMESTAMPTZ: pg({ code: 'TIMESTAMP' }),
  'TIMESTAMP WITH TIME ZONE': pg({ code: 'TIMESTAMP' }),
  NUMERIC: pg({ code: 'NUMERIC', typeAnnotation: 'PG_NUMERIC' }),
  DECIMAL: pg({ code: 'NUMERIC', typeAnnotation: 'PG_NUMERIC' }),
  JSONB: pg({ code: 'JSON', typeAnnotation: 'PG_JSONB' }),
  OID: pg({ code: 'INT64', typeAnnotation: 'PG_OID' }, false),
  UUID: pg({ code: 'UUID' }),
};

/**
 * The longest PostgreSQL type name (up to `max` words) that `words` start with, for a column definition
 * (`ddl`) or a cast; `undefined` when none matches. `words` are the next tokens' texts (any case).
 */
export function matchPgTypeName(
  words: ReadonlyArray<string | undefined>,
  ddl: boolean,
  max = 4,
): { type: SpannerTypeJson; used: number } | undefined {
  for (let n = Math.min(max, words.length); n >= 1; n--) {
    const head = words.slice(0, n);
    if (head.some((w) => w === undefined)) continue;
    const entry = PG_NAMES[head.map((w) => (w as string).toUpperCase()).join(' ')];
    if (entry && (entry.ddl || !ddl)) return { type: entry.type, used: n };
  }
  return undefined;
}

/** How PostgreSQL prints each wire type (INFORMATION_SCHEMA, DDL, error messages). */
export const PG_PRINT_NAMES: Record<string, string> = {
  INT64: 'bigint',
  FLOAT64: 'double precision',
  FLOAT32: 'real',
  BOOL: 'boolean',
  STRING: 'character varying',
  BYTES: 'bytea',
  DATE: 'date',
  TIMESTAMP: 'timestamp with time zone',
  NUMERIC: 'numeric',
  JSON: 'jsonb',
  TOKENLIST: 'spanner.tokenlist',
  UUID: 'uuid',
};
