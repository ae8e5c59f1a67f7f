/**
 * Spanner column types: read from the `type` JSON of a data-change record's `column_types`, and from the
 * `SPANNER_TYPE` text of INFORMATION_SCHEMA.COLUMNS in both dialects.
 */
import type { Dialect, SpannerType } from './change-record';
import { DecodeError, describeValue } from './client-values';

/** Type codes a column can have (STRUCT only occurs in query results, never as a column). */
export const COLUMN_TYPE_CODES = [
  'BOOL',
  'INT64',
  'FLOAT32',
  'FLOAT64',
  'NUMERIC',
  'STRING',
  'BYTES',
  'DATE',
  'TIMESTAMP',
  'JSON',
  'UUID',
  'INTERVAL',
  'PROTO',
  'ENUM',
  'ARRAY',
] as const;

/** One of {@link COLUMN_TYPE_CODES}. */
export type ColumnTypeCode = (typeof COLUMN_TYPE_CODES)[number];

function pick(obj: Record<string, unknown>, snake: string, camel: string): unknown {
  return obj[snake] ?? obj[camel];
}

/**
 * Parses the `type` JSON of `column_types` (`{"code":"ARRAY","array_element_type":{"code":"INT64"}}`,
 * `{"code":"NUMERIC","type_annotation":"PG_NUMERIC"}`). Both snake_case and camelCase keys are accepted.
 * @throws DecodeError naming the path and what was seen, for an unknown code or shape.
 */
export function parseTypeJson(json: unknown, path: string): SpannerType {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new DecodeError(path, `expected a type object, saw ${describeValue(json)}`);
  }
  const obj = json as Record<string, unknown>;
  const code = obj['code'];
  if (typeof code !== 'string' || !(COLUMN_TYPE_CODES as readonly string[]).includes(code)) {
    throw new DecodeError(path, `unknown Spanner type code, saw ${describeValue(code)}`);
  }
  const type: SpannerType = { code };
  const annotation = pick(obj, 'type_annotation', 'typeAnnotation');
  if (typeof annotation === 'string' && annotation !== 'TYPE_ANNOTATION_CODE_UNSPECIFIED') {
    type.typeAnnotation = annotation;
  }
  const fqn = pick(obj, 'proto_type_fqn', 'protoTypeFqn');
  if (typeof fqn === 'string' && fqn !== '') type.protoTypeFqn = fqn;
  if (code === 'ARRAY') {
    const element = parseTypeJson(
      pick(obj, 'array_element_type', 'arrayElementType'),
      `${path}.array_element_type`,
    );
    if (element.code === 'ARRAY')
      throw new DecodeError(path, 'arrays of arrays are not a Spanner column type');
    type.arrayElementType = element;
  }
  return type;
}

/** The scalar codes GoogleSQL spells as they are (`STRING(MAX)` less its length); PROTO and ENUM name a type. */
const GOOGLESQL_SCALARS: ReadonlySet<string> = new Set(
  COLUMN_TYPE_CODES.filter((code) => code !== 'PROTO' && code !== 'ENUM' && code !== 'ARRAY'),
);

const POSTGRES_SCALARS: Record<string, SpannerType> = {
  boolean: { code: 'BOOL' },
  bigint: { code: 'INT64' },
  oid: { code: 'INT64', typeAnnotation: 'PG_OID' },
  real: { code: 'FLOAT32' },
  'double precision': { code: 'FLOAT64' },
  numeric: { code: 'NUMERIC', typeAnnotation: 'PG_NUMERIC' },
  'character varying': { code: 'STRING' },
  text: { code: 'STRING' },
  bytea: { code: 'BYTES' },
  date: { code: 'DATE' },
  'timestamp with time zone': { code: 'TIMESTAMP' },
  'spanner.commit_timestamp': { code: 'TIMESTAMP' },
  jsonb: { code: 'JSON', typeAnnotation: 'PG_JSONB' },
  uuid: { code: 'UUID' },
  interval: { code: 'INTERVAL' },
};

function parseGoogleSqlTypeName(text: string): SpannerType | undefined {
  const array = /^ARRAY<(.+)>$/i.exec(text);
  if (array) {
    const element = parseGoogleSqlTypeName(array[1]!.trim());
    return element && element.code !== 'ARRAY' ? { code: 'ARRAY', arrayElementType: element } : undefined;
  }
  const proto = /^(PROTO|ENUM)<`?([\w.]+)`?>$/i.exec(text);
  if (proto) return { code: proto[1]!.toUpperCase(), protoTypeFqn: proto[2]! };
  const scalar = text.replace(/\((\d+|MAX)\)$/i, '').toUpperCase();
  return GOOGLESQL_SCALARS.has(scalar) ? { code: scalar } : undefined;
}

function parsePostgresTypeName(text: string): SpannerType | undefined {
  const lower = text.toLowerCase().replace(/\s+/g, ' ');
  if (lower.endsWith('[]')) {
    const element = parsePostgresTypeName(lower.slice(0, -2).trim());
    return element && element.code !== 'ARRAY' ? { code: 'ARRAY', arrayElementType: element } : undefined;
  }
  const scalar = POSTGRES_SCALARS[lower.replace(/\(\d+\)$/, '').trim()];
  return scalar ? { ...scalar } : undefined;
}

/**
 * Parses `INFORMATION_SCHEMA.COLUMNS.SPANNER_TYPE`: GoogleSQL (`STRING(MAX)`, `ARRAY<INT64>`,
 * `PROTO<pkg.Msg>`) or PostgreSQL (`character varying(256)`, `bigint[]`, `timestamp with time zone`).
 * @throws Error naming the type text when it is not a column type this pipeline knows.
 */
export function parseSpannerTypeName(text: string, dialect: Dialect): SpannerType {
  const trimmed = text.trim();
  const type = dialect === 'POSTGRESQL' ? parsePostgresTypeName(trimmed) : parseGoogleSqlTypeName(trimmed);
  if (!type) throw new Error(`unsupported ${dialect} column type ${JSON.stringify(text)}`);
  return type;
}

/** Readable form of a type for messages, e.g. `ARRAY<NUMERIC(PG_NUMERIC)>`. */
export function formatSpannerType(type: SpannerType): string {
  if (type.code === 'ARRAY' && type.arrayElementType)
    return `ARRAY<${formatSpannerType(type.arrayElementType)}>`;
  const detail = type.typeAnnotation ?? type.protoTypeFqn;
  return detail ? `${type.code}(${detail})` : type.code;
}
