/**
 * Translates a GoogleSQL or PostgreSQL query into SQLite. The translation is deliberately narrow: only
 * constructs whose SQLite meaning equals Spanner's pass through; anything else fails with INVALID_ARGUMENT or
 * UNIMPLEMENTED naming the construct, so the emulator never answers wrongly where it cannot answer right.
 */
import { Code, SpannerError } from './hooks';
import type { Schema } from './schema';
import { qi, ql } from './storage';
import { closingParen, type Dialect, isOp, isWord, type Token, tokenize } from './tokenizer';
import { normalizeTimestamp } from './values';

/** A translated query. */
export interface Translated {
  sql: string;
  /** Lower-cased names of user tables the query mentions (each gets a snapshot CTE). */
  tables: Set<string>;
  /** True when the text starts with WITH (so the snapshot CTEs are merged into it). */
  startsWithWith: boolean;
}

/** Spanner function → SQLite function (same semantics, possibly a custom function). */
const FUNCTIONS: Record<string, string> = {
  COUNT: 'count',
  SUM: 'sum',
  MIN: 'min',
  MAX: 'max',
  AVG: 'avg',
  COALESCE: 'coalesce',
  IFNULL: 'ifnull',
  NULLIF: 'nullif',
  LOWER: 'lower',
  UPPER: 'upper',
  LENGTH: 'length',
  CHAR_LENGTH: 'length',
  CHARACTER_LENGTH: 'length',
  SUBSTR: 'substr',
  SUBSTRING: 'substr',
  TRIM: 'trim',
  LTRIM: 'ltrim',
  RTRIM: 'rtrim',
  REPLACE: 'replace',
  ABS: 'abs',
  STRPOS: 'instr',
  CONCAT: 'spanner_concat',
  STARTS_WITH: 'spanner_starts_with',
  ENDS_WITH: 'spanner_ends_with',
  MOD: 'spanner_mod',
  DIV: 'spanner_div',
  IF: 'iif',
  GREATEST: 'max',
  LEAST: 'min',
  ARRAY_LENGTH: 'spanner_array_length',
  CURRENT_TIMESTAMP: 'spanner_now',
  NOW: 'spanner_now',
  PENDING_COMMIT_TIMESTAMP: 'spanner_pending_commit_timestamp',
};

/** Words that may be followed by `(` without being function calls. */
const KEYWORDS = new Set(
  'IN EXISTS AS VALUES USING OVER AND OR NOT ON SELECT FROM JOIN WHERE WHEN THEN ELSE CASE BY ALL ANY UNION DISTINCT INTERSECT EXCEPT LIKE IS BETWEEN CAST INTO SET LIMIT OFFSET HAVING WITH'.split(
    ' ',
  ),
);
const REJECTED = new Set(
  'UNNEST STRUCT ARRAY TABLESAMPLE QUALIFY PIVOT UNPIVOT SPANNER_SYS PG_CATALOG RECURSIVE INTERVAL EXTRACT'.split(
    ' ',
  ),
);
const CAST_TYPES: Record<string, string> = {
  INT64: 'INTEGER',
  BIGINT: 'INTEGER',
  INT8: 'INTEGER',
  FLOAT64: 'REAL',
  FLOAT8: 'REAL',
  STRING: 'TEXT',
  TEXT: 'TEXT',
  VARCHAR: 'TEXT',
};

function unimplemented(what: string): never {
  throw new SpannerError(Code.UNIMPLEMENTED, `The emulator does not support ${what}`);
}

function literal(t: Token): string {
  if (t.kind === 'string') return ql(t.value);
  return `X'${Buffer.from(t.value, 'latin1').toString('hex')}'`;
}

/** Renders one identifier-ish token, noting table names. */
function renderIdent(tokens: Token[], i: number, schema: Schema, out: Translated): string {
  const t = tokens[i] as Token;
  const upper = t.value.toUpperCase();
  const next = tokens[i + 1];
  const afterDot = isOp(tokens[i - 1], '.');
  if (t.kind === 'ident' && REJECTED.has(upper)) return unimplemented(`${upper} in queries`);
  if (t.kind === 'ident' && isOp(next, '(') && !afterDot && !KEYWORDS.has(upper)) {
    const fn = FUNCTIONS[upper];
    if (!fn) throw new SpannerError(Code.INVALID_ARGUMENT, `Function not found: ${t.value}`);
    return fn;
  }
  if (!afterDot && schema.find(t.value)) out.tables.add(t.value.toLowerCase());
  return t.kind === 'qident' ? qi(t.value) : t.value;
}

/** Handles typed literals (`TIMESTAMP '...'`) and PostgreSQL `::type` casts; returns tokens consumed. */
function typedLiteral(tokens: Token[], i: number, parts: string[]): number {
  const t = tokens[i] as Token;
  const next = tokens[i + 1];
  const kw = t.value.toUpperCase();
  if (
    t.kind === 'ident' &&
    next?.kind === 'string' &&
    ['TIMESTAMP', 'DATE', 'NUMERIC', 'JSON'].includes(kw)
  ) {
    parts.push(ql(kw === 'TIMESTAMP' ? normalizeTimestamp(next.value) : next.value));
    return 2;
  }
  return 0;
}

function renderToken(tokens: Token[], i: number, d: Dialect, schema: Schema, out: Translated): string {
  const t = tokens[i] as Token;
  switch (t.kind) {
    case 'string':
    case 'bytes':
      return literal(t);
    case 'param':
      return d === 'POSTGRESQL' ? `@p${t.value}` : `@${t.value}`;
    case 'hint':
      return '';
    case 'number':
      return t.value;
    case 'op':
      if (t.value === '/' && d === 'GOOGLE_STANDARD_SQL')
        return unimplemented('the / operator (GoogleSQL returns FLOAT64 even for INT64 operands); use DIV()');
      if (t.value === '[' || t.value === '@@' || t.value === '{')
        return unimplemented(`the ${t.value} syntax`);
      return t.value;
    default:
      return renderIdent(tokens, i, schema, out);
  }
}

/** PostgreSQL sorts NULLs last in ascending order (SQLite first): make the order explicit. */
function pgNullOrdering(tokens: Token[]): Token[] {
  const out: Token[] = [];
  let depth = 0;
  let orderDepth = -1;
  const close = () => {
    const last = out[out.length - 1];
    const hasNulls = out.slice(-3).some((t) => isWord(t, 'NULLS'));
    if (!hasNulls) {
      const desc = isWord(last, 'DESC');
      out.push(
        { kind: 'ident', value: 'NULLS', pos: -1 },
        { kind: 'ident', value: desc ? 'FIRST' : 'LAST', pos: -1 },
      );
    }
  };
  for (const [i, t] of tokens.entries()) {
    const atOrder = orderDepth === depth;
    if (
      atOrder &&
      (isOp(t, ',') || isOp(t, ')') || isWord(t, 'LIMIT') || isWord(t, 'OFFSET') || isWord(t, 'FOR'))
    ) {
      close();
      if (!isOp(t, ',')) orderDepth = -1;
    }
    if (isOp(t, '(')) depth++;
    if (isOp(t, ')')) depth--;
    if (isWord(t, 'ORDER') && isWord(tokens[i + 1], 'BY')) orderDepth = depth;
    out.push(t);
  }
  if (orderDepth >= 0) close();
  return out;
}

/** Drops `::type` casts after parameters and literals (their types are already fixed); rejects others. */
function dropPgCasts(tokens: Token[]): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    if (!isOp(t, '::')) {
      out.push(t);
      continue;
    }
    const prev = out[out.length - 1];
    if (prev?.kind !== 'param' && prev?.kind !== 'string') unimplemented('::casts of expressions');
    i++;
    while (isWord(tokens[i + 1], 'WITH') || isWord(tokens[i + 1], 'TIME') || isWord(tokens[i + 1], 'ZONE'))
      i++;
  }
  return out;
}

/** Renders `CAST(expr AS type)` for the types whose SQLite cast matches; returns the index of `)`. */
function renderCast(
  tokens: Token[],
  i: number,
  d: Dialect,
  schema: Schema,
  out: Translated,
  parts: string[],
): number {
  const close = closingParen(tokens, i + 1);
  let asAt = -1;
  let depth = 0;
  for (let j = i + 2; j < close; j++) {
    if (isOp(tokens[j], '(')) depth++;
    if (isOp(tokens[j], ')')) depth--;
    if (depth === 0 && isWord(tokens[j], 'AS')) asAt = j;
  }
  const typeName = tokens
    .slice(asAt + 1, close)
    .map((t) => t.value.toUpperCase())
    .join(' ');
  const target = CAST_TYPES[typeName];
  if (asAt < 0 || !target) return unimplemented(`CAST to ${typeName || '(missing type)'}`);
  const inner = translate(tokens.slice(i + 2, asAt), d, schema);
  for (const name of inner.tables) out.tables.add(name);
  parts.push(`CAST(${inner.sql} AS ${target})`);
  return close;
}

/** Translates a query (or a DML expression fragment) into SQLite. */
export function translate(sql: string | Token[], d: Dialect, schema: Schema): Translated {
  let tokens = typeof sql === 'string' ? tokenize(sql.trim().replace(/;\s*$/, ''), d) : sql;
  if (d === 'POSTGRESQL') tokens = pgNullOrdering(dropPgCasts(tokens));
  const out: Translated = { sql: '', tables: new Set(), startsWithWith: isWord(tokens[0], 'WITH') };
  const parts: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    if (isOp(t, '*') && isWord(tokens[i + 1], 'EXCEPT') && isOp(tokens[i + 2], '('))
      unimplemented('SELECT * EXCEPT');
    if (isWord(t, 'CAST') && isOp(tokens[i + 1], '(')) {
      i = renderCast(tokens, i, d, schema, out, parts);
      continue;
    }
    const used = typedLiteral(tokens, i, parts);
    if (used) {
      i += used - 1;
      continue;
    }
    parts.push(renderToken(tokens, i, d, schema, out));
  }
  out.sql = parts.join(' ');
  return out;
}
