/**
 * Column types: parsing DDL type names of both dialects into `google.spanner.v1.Type` (plain-object form),
 * and printing them back for DDL and INFORMATION_SCHEMA.
 */
import { Code, SpannerError, type SpannerTypeJson } from './hooks';
import { type Dialect, isOp, isWord, type Token } from './tokenizer';

/** A column's type as declared: wire type plus the DDL details Spanner reports back. */
export interface ColumnType {
  type: SpannerTypeJson;
  /** STRING(n) / BYTES(n) / varchar(n) length; undefined for MAX or types without one. */
  length?: number;
  /** TIMESTAMP column with allow_commit_timestamp (PostgreSQL: spanner.commit_timestamp). */
  allowCommitTimestamp?: boolean;
  /**
   * A GoogleSQL column named by a dotted type name (`pkg.Msg`): PROTO or ENUM, decided by the proto bundle
   * when the statement is applied (the parser cannot tell a message from an enum).
   */
  protoName?: string;
}

const GSQL_SCALARS = [
  'INT64',
  'FLOAT64',
  'FLOAT32',
  'BOOL',
  'DATE',
  'TIMESTAMP',
  'NUMERIC',
  'JSON',
  'TOKENLIST',
  'UUID',
];
const PG_NAMES: Record<string, SpannerTypeJson> = {
  BIGINT: { code: 'INT64' },
  INT8: { code: 'INT64' },
  FLOAT8: { code: 'FLOAT64' },
  'DOUBLE PRECISION': { code: 'FLOAT64' },
  REAL: { code: 'FLOAT32' },
  FLOAT4: { code: 'FLOAT32' },
  BOOLEAN: { code: 'BOOL' },
  BOOL: { code: 'BOOL' },
  TEXT: { code: 'STRING' },
  VARCHAR: { code: 'STRING' },
  'CHARACTER VARYING': { code: 'STRING' },
  BYTEA: { code: 'BYTES' },
  DATE: { code: 'DATE' },
  TIMESTAMPTZ: { code: 'TIMESTAMP' },
  'TIMESTAMP WITH TIME ZONE': { code: 'TIMESTAMP' },
  NUMERIC: { code: 'NUMERIC', typeAnnotation: 'PG_NUMERIC' },
  DECIMAL: { code: 'NUMERIC', typeAnnotation: 'PG_NUMERIC' },
  JSONB: { code: 'JSON', typeAnnotation: 'PG_JSONB' },
  UUID: { code: 'UUID' },
  'SPANNER.COMMIT_TIMESTAMP': { code: 'TIMESTAMP' },
  // Full-text search tokens: never returned by a read, only used by search functions.
  'SPANNER.TOKENLIST': { code: 'TOKENLIST' },
};

function unsupported(what: string): never {
  throw new SpannerError(Code.UNIMPLEMENTED, `Column type ${what} is not supported by the emulator`);
}

function readLength(tokens: Token[], i: number): [number | undefined, number] {
  if (!isOp(tokens[i], '(')) return [undefined, i];
  const v = tokens[i + 1];
  if (!isOp(tokens[i + 2], ')')) throw new SpannerError(Code.INVALID_ARGUMENT, 'Syntax error in type length');
  return [isWord(v, 'MAX') ? undefined : Number(v?.value), i + 3];
}

/** A dotted type name (`pkg.Msg`, or one backquoted `` `pkg.Msg` ``) at `i`, with the index after it. */
function dottedName(tokens: Token[], i: number): [string, number] | undefined {
  const first = tokens[i];
  if (first?.kind === 'qident' && first.value.includes('.')) return [first.value, i + 1];
  if (first?.kind !== 'ident' || !isOp(tokens[i + 1], '.')) return undefined;
  const parts = [first.value];
  let j = i + 1;
  while (isOp(tokens[j], '.') && (tokens[j + 1]?.kind === 'ident' || tokens[j + 1]?.kind === 'qident')) {
    parts.push((tokens[j + 1] as Token).value);
    j += 2;
  }
  return [parts.join('.'), j];
}

function parseGsql(tokens: Token[], i: number): [ColumnType, number] {
  const word = (tokens[i]?.value ?? '').toUpperCase();
  const dotted = dottedName(tokens, i);
  if (dotted) return [{ type: { code: 'PROTO', protoTypeFqn: dotted[0] }, protoName: dotted[0] }, dotted[1]];
  if (word === 'ARRAY' && isOp(tokens[i + 1], '<')) {
    const [el, j] = parseGsql(tokens, i + 2);
    if (!isOp(tokens[j], '>'))
      throw new SpannerError(Code.INVALID_ARGUMENT, 'Syntax error: expected > after ARRAY<');
    const array: ColumnType = { type: { code: 'ARRAY', arrayElementType: el.type }, length: el.length };
    if (el.protoName) array.protoName = el.protoName;
    return [array, j + 1];
  }
  if (word === 'STRING' || word === 'BYTES') {
    const [length, j] = readLength(tokens, i + 1);
    return [{ type: { code: word }, length }, j];
  }
  if (GSQL_SCALARS.includes(word)) return [{ type: { code: word } }, i + 1];
  return unsupported(word || '(missing)');
}

function parsePg(tokens: Token[], i: number): [ColumnType, number] {
  let name = '';
  let used = 0;
  for (let n = 3; n >= 1 && !name; n--) {
    const w = tokens
      .slice(i, i + n)
      .map((t) => t.value.toUpperCase())
      .join(' ');
    if (PG_NAMES[w]) [name, used] = [w, n];
  }
  if (isWord(tokens[i], 'SPANNER') && isOp(tokens[i + 1], '.') && isWord(tokens[i + 2], 'COMMIT_TIMESTAMP'))
    [name, used] = ['SPANNER.COMMIT_TIMESTAMP', 3];
  if (isWord(tokens[i], 'SPANNER') && isOp(tokens[i + 1], '.') && isWord(tokens[i + 2], 'TOKENLIST'))
    [name, used] = ['SPANNER.TOKENLIST', 3];
  if (!name) return unsupported(tokens[i]?.value ?? '(missing)');
  const [length, after] = readLength(tokens, i + used);
  let ct: ColumnType = { type: PG_NAMES[name] as SpannerTypeJson, length };
  if (name === 'SPANNER.COMMIT_TIMESTAMP') ct.allowCommitTimestamp = true;
  let j = after;
  while (isOp(tokens[j], '[') && isOp(tokens[j + 1], ']')) {
    ct = { type: { code: 'ARRAY', arrayElementType: ct.type }, length: ct.length };
    j += 2;
  }
  return [ct, j];
}

/** Parses a column type starting at `tokens[i]`; returns it and the index after it. */
export function parseColumnType(tokens: Token[], i: number, dialect: Dialect): [ColumnType, number] {
  return dialect === 'POSTGRESQL' ? parsePg(tokens, i) : parseGsql(tokens, i);
}

const PG_PRINT: Record<string, string> = {
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

/**
 * The type as INFORMATION_SCHEMA.COLUMNS.SPANNER_TYPE shows it (`PROTO<pkg.Msg>`, `ENUM<pkg.Enum>`) and,
 * with `ddl`, as GetDatabaseDdl prints it (a PROTO / ENUM column by its bare type name, as it is declared).
 */
export function spannerTypeName(ct: ColumnType, dialect: Dialect, ddl = false): string {
  const len = ct.length === undefined ? 'MAX' : String(ct.length);
  if (dialect === 'POSTGRESQL') {
    if (ct.type.code === 'ARRAY')
      return `${spannerTypeName({ type: ct.type.arrayElementType as SpannerTypeJson, length: ct.length }, dialect)}[]`;
    if (ct.allowCommitTimestamp) return 'spanner.commit_timestamp';
    const base = PG_PRINT[ct.type.code] ?? ct.type.code.toLowerCase();
    return ct.type.code === 'STRING' && ct.length !== undefined ? `${base}(${ct.length})` : base;
  }
  if (ct.type.code === 'ARRAY')
    return `ARRAY<${spannerTypeName({ type: ct.type.arrayElementType as SpannerTypeJson, length: ct.length }, dialect, ddl)}>`;
  if (ct.type.code === 'STRING' || ct.type.code === 'BYTES') return `${ct.type.code}(${len})`;
  if (ct.type.code === 'PROTO' || ct.type.code === 'ENUM')
    return ddl ? (ct.type.protoTypeFqn ?? '') : `${ct.type.code}<${ct.type.protoTypeFqn ?? ''}>`;
  return ct.type.code;
}

/** PostgreSQL INFORMATION_SCHEMA.COLUMNS.DATA_TYPE (GoogleSQL leaves it NULL). */
export function pgDataType(ct: ColumnType): string {
  return ct.type.code === 'ARRAY' ? 'ARRAY' : (PG_PRINT[ct.type.code] ?? ct.type.code.toLowerCase());
}

/** Short type names of the Node client (`types: {x: 'int64'}`) are not needed here; this names a type. */
export function typeLabel(t: SpannerTypeJson): string {
  if (t.code === 'PROTO' || t.code === 'ENUM') return `${t.code}<${t.protoTypeFqn ?? ''}>`;
  return t.code === 'ARRAY' ? `ARRAY<${typeLabel(t.arrayElementType as SpannerTypeJson)}>` : t.code;
}
