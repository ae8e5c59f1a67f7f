/**
 * Reads of whole rows at a commit timestamp, for the replica rows a change record does not carry: one query
 * per table and timestamp over a set of keys. `SELECT *` returns every column the table had at that
 * timestamp (the read is at that timestamp, so it sees that schema version), never a hidden one; the
 * result's own column types say what it holds, so a column added since the plan was made is seen, not lost.
 * Keys are bound as parameters; names are quoted identifiers, never spliced values.
 */
import type { Dialect, JsonValue, SpannerType } from './change-record';
import { formatTimestamp, parseTimestamp } from './timestamp';

/** A key column: its name and type (which decides the parameter's type). */
export interface KeyColumn {
  name: string;
  type: SpannerType;
}

/** A query with parameters as the Spanner client's `run({sql, params, types})` takes them. */
export interface KeyedQuery {
  sql: string;
  params: Record<string, JsonValue>;
  types: Record<string, string>;
}

/** Keys per query: a few hundred parameters stay well inside Spanner's limits. */
export const KEYS_PER_READ = 200;

/** The Node client's parameter type name of a key column (keys are scalar; no ARRAY, JSON or STRUCT). */
function paramType(type: SpannerType): string {
  switch (type.code) {
    case 'INT64':
    case 'ENUM':
      return 'int64';
    case 'FLOAT64':
      return 'float64';
    case 'FLOAT32':
      return 'float32';
    case 'NUMERIC':
      return type.typeAnnotation === 'PG_NUMERIC' ? 'pgNumeric' : 'numeric';
    case 'BOOL':
      return 'bool';
    case 'BYTES':
    case 'PROTO':
      return 'bytes';
    case 'DATE':
      return 'date';
    case 'TIMESTAMP':
      return 'timestamp';
    case 'UUID':
      return 'uuid';
    default:
      return 'string';
  }
}

/** Quotes one identifier (each part of a named-schema name separately). */
export function quoteName(dialect: Dialect, name: string): string {
  const q = dialect === 'POSTGRESQL' ? '"' : '`';
  return name
    .split('.')
    .map((part) => `${q}${part.split(q).join(q + q)}${q}`)
    .join('.');
}

/** `SELECT * FROM t WHERE (k1 = ? AND k2 = ?) OR …` over `keys` (each a mod's `keys` object). */
export function keyedRowsQuery(
  dialect: Dialect,
  table: string,
  keyColumns: readonly KeyColumn[],
  keys: ReadonlyArray<Record<string, JsonValue>>,
): KeyedQuery {
  if (keyColumns.length === 0) throw new Error(`table ${table} has no key columns`);
  const params: Record<string, JsonValue> = {};
  const types: Record<string, string> = {};
  let n = 0;
  const terms = keys.map((key) => {
    const parts = keyColumns.map((c) => {
      const value = key[c.name];
      const column = quoteName(dialect, c.name);
      if (value === null || value === undefined) return `${column} IS NULL`;
      n++;
      const name = dialect === 'POSTGRESQL' ? `p${n}` : `k${n}`;
      params[name] = value;
      types[name] = paramType(c.type);
      return `${column} = ${dialect === 'POSTGRESQL' ? `$${n}` : `@${name}`}`;
    });
    return `(${parts.join(' AND ')})`;
  });
  const sql = `SELECT * FROM ${quoteName(dialect, table)} WHERE ${terms.join(' OR ')}`;
  return { sql, params, types };
}

function canonicalDecimal(text: string): string {
  const m = /^([+-]?)0*(\d*?)(?:\.(\d*?)0*)?$/.exec(text.trim());
  if (!m) return text;
  const int = m[2] || '0';
  const frac = m[3] ?? '';
  const body = frac ? `${int}.${frac}` : int;
  return body === '0' ? '0' : `${m[1] === '-' ? '-' : ''}${body}`;
}

function canonicalPart(type: SpannerType, value: JsonValue): JsonValue {
  if (value === null || value === undefined) return null;
  if (type.code === 'TIMESTAMP' && typeof value === 'string') return formatTimestamp(parseTimestamp(value));
  if (type.code === 'NUMERIC' && typeof value === 'string') return canonicalDecimal(value);
  if ((type.code === 'INT64' || type.code === 'ENUM') && typeof value === 'number') return String(value);
  return value;
}

/**
 * One text per key, equal for a mod's key and the same key read from a row: timestamps at nine digits,
 * decimals without padding, integers as text.
 */
export function canonicalKey(keyColumns: readonly KeyColumn[], values: Record<string, JsonValue>): string {
  return JSON.stringify(keyColumns.map((c) => canonicalPart(c.type, values[c.name] ?? null)));
}
