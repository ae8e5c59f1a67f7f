/**
 * Column types: parsing DDL type names of both dialects into `google.spanner.v1.Type` (plain-object form),
 * and printing them back for DDL and INFORMATION_SCHEMA.
 */
import { Code, SpannerError, type SpannerTypeJson } from './hooks';
import { type Dialect, isOp, isWord, type Token } from './tokenizer';
import { GSQL_SCALAR_NAMES, matchPgTypeName, PG_PRINT_NAMES } from './type-names';

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

/** GoogleSQL column types without a length: the scalars, and full-text search tokens. */
const GSQL_SCALARS: readonly string[] = [...GSQL_SCALAR_NAMES, 'TOKENLIST'];

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

/** `spanner.commit_timestamp` / `spanner.tokenlist`: Spanner's own PostgreSQL types, three tokens each. */
function spannerPgType(tokens: Token[], i: number): SpannerTypeJson | undefined {
  if (!isWord(tokens[i], 'SPANNER') || !isOp(tokens[i + 1], '.')) return undefined;
  if (isWord(tokens[i + 2], 'COMMIT_TIMESTAMP')) return { code: 'TIMESTAMP' };
  // Full-text search tokens: never returned by a read, only used by search functions.
  if (isWord(tokens[i + 2], 'TOKENLIST')) return { code: 'TOKENLIST' };
  return undefined;
}

function parsePg(tokens: Token[], i: number): [ColumnType, number] {
  const own = spannerPgType(tokens, i);
  const words = tokens.slice(i, i + 3).map((t) => t.value);
  const found = own ? { type: own, used: 3 } : matchPgTypeName(words, true);
  if (!found) return unsupported(tokens[i]?.value ?? '(missing)');
  const { type, used } = found;
  const [length, after] = readLength(tokens, i + used);
  let ct: ColumnType = { type, length };
  if (own?.code === 'TIMESTAMP') ct.allowCommitTimestamp = true;
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
    const base = PG_PRINT_NAMES[ct.type.code] ?? ct.type.code.toLowerCase();
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
  return ct.type.code === 'ARRAY' ? 'ARRAY' : (PG_PRINT_NAMES[ct.type.code] ?? ct.type.code.toLowerCase());
}

/** Short type names of the Node client (`types: {x: 'int64'}`) are not needed here; this names a type. */
export function typeLabel(t: SpannerTypeJson): string {
  if (t.code === 'PROTO' || t.code === 'ENUM') return `${t.code}<${t.protoTypeFqn ?? ''}>`;
  return t.code === 'ARRAY' ? `ARRAY<${typeLabel(t.arrayElementType as SpannerTypeJson)}>` : t.code;
}
