/**
 * Types of expressions: names as each dialect prints them, equality, the implicit coercions of ZetaSQL
 * (INT64 → NUMERIC → FLOAT64, FLOAT32 → FLOAT64, literals and untyped parameters to anything they parse as),
 * and the common supertype that CASE, COALESCE, IN lists, array literals and set operations need.
 */
import { Code, SpannerError, type SpannerTypeJson } from '../hooks';
import type { Dialect } from '../tokenizer';
import { PG_PRINT_NAMES } from '../type-names';

/** A type (the plain-object form of `google.spanner.v1.Type`). */
export type SqlType = SpannerTypeJson;

/** The scalar types by code. */
export const T = {
  INT64: { code: 'INT64' },
  FLOAT64: { code: 'FLOAT64' },
  FLOAT32: { code: 'FLOAT32' },
  BOOL: { code: 'BOOL' },
  STRING: { code: 'STRING' },
  BYTES: { code: 'BYTES' },
  DATE: { code: 'DATE' },
  TIMESTAMP: { code: 'TIMESTAMP' },
  NUMERIC: { code: 'NUMERIC' },
  JSON: { code: 'JSON' },
} satisfies Record<string, SqlType>;

/** An array type. */
export function arrayOf(el: SqlType): SqlType {
  return { code: 'ARRAY', arrayElementType: el };
}

/** A typed expression compiled to SQLite: its SQL text (in stored form), its type and how it may coerce. */
export interface Typed {
  sql: string;
  type: SqlType;
  /** `null`: the NULL literal; `param`: an untyped parameter; `string`/`int`/`float`: a literal. */
  flex?: 'null' | 'param' | 'string' | 'int' | 'float' | 'stringParam';
  /** The literal's text (flex string / int / float), or the untyped parameter's name. */
  text?: string;
  /** True when the expression contains an aggregate. */
  agg?: boolean;
  /** The implicit output column name (a column reference's or field's name). */
  name?: string;
}

/** The type as the dialect's error messages print it: `ARRAY<STRUCT<a INT64>>` or `bigint[]`. */
export function typeName(t: SqlType, d: Dialect): string {
  if (d === 'POSTGRESQL') {
    if (t.code === 'ARRAY') return `${typeName(t.arrayElementType as SqlType, d)}[]`;
    if (t.typeAnnotation === 'PG_OID') return 'oid';
    return PG_PRINT_NAMES[t.code] ?? t.code.toLowerCase();
  }
  if (t.code === 'ARRAY') return `ARRAY<${typeName(t.arrayElementType as SqlType, d)}>`;
  if (t.code === 'STRUCT')
    return `STRUCT<${(t.structType?.fields ?? []).map((f) => `${f.name ? `${f.name} ` : ''}${typeName(f.type, d)}`).join(', ')}>`;
  // ZetaSQL names a message or enum type by its full name.
  if ((t.code === 'PROTO' || t.code === 'ENUM') && t.protoTypeFqn) return t.protoTypeFqn;
  return t.code;
}

/** True when two types are the same (struct field names aside). */
export function sameType(a: SqlType, b: SqlType): boolean {
  if (a.code !== b.code) return false;
  if (a.code === 'ARRAY') return sameType(a.arrayElementType as SqlType, b.arrayElementType as SqlType);
  if (a.code === 'STRUCT') {
    const fa = a.structType?.fields ?? [];
    const fb = b.structType?.fields ?? [];
    return fa.length === fb.length && fa.every((f, i) => sameType(f.type, (fb[i] as { type: SqlType }).type));
  }
  if (a.code === 'PROTO' || a.code === 'ENUM') return a.protoTypeFqn === b.protoTypeFqn;
  return (a.typeAnnotation ?? '') === (b.typeAnnotation ?? '') || a.code === 'NUMERIC' || a.code === 'JSON';
}

const NUMERIC_RANK: Record<string, number> = { INT64: 1, NUMERIC: 2, FLOAT32: 3, FLOAT64: 4 };

/** True for the numeric types. */
export function isNumeric(t: SqlType): boolean {
  return t.code in NUMERIC_RANK;
}

/** The wider of two numeric types (INT64 < NUMERIC < FLOAT32 < FLOAT64; FLOAT32 with NUMERIC is FLOAT64). */
function widerNumeric(a: SqlType, b: SqlType): SqlType {
  if ((a.code === 'FLOAT32' && b.code === 'NUMERIC') || (a.code === 'NUMERIC' && b.code === 'FLOAT32'))
    return T.FLOAT64;
  return (NUMERIC_RANK[a.code] ?? 0) >= (NUMERIC_RANK[b.code] ?? 0) ? a : b;
}

/** True when a value of `from` converts implicitly to `to` (not counting literal coercion). */
export function coercible(from: SqlType, to: SqlType): boolean {
  if (sameType(from, to)) return true;
  if (isNumeric(from) && isNumeric(to))
    return sameType(widerNumeric(from, to), to) && from.code !== 'FLOAT64';
  return false;
}

/** True when an expression of this flex kind adapts to any type (NULL, untyped parameters). */
export function adaptsToAny(x: Typed): boolean {
  return x.flex === 'null' || x.flex === 'param';
}

/** True when the literal can become a value of `to` (string literals to DATE / TIMESTAMP, numbers to floats). */
export function literalFits(x: Typed, to: SqlType, d: Dialect): boolean {
  if (x.flex === 'string')
    return d === 'POSTGRESQL' ? to.code !== 'ARRAY' : ['DATE', 'TIMESTAMP', 'UUID'].includes(to.code);
  if (x.flex === 'stringParam') return to.code === 'UUID';
  if (x.flex === 'int') return isNumeric(to);
  if (x.flex === 'float') return to.code === 'FLOAT64' || to.code === 'FLOAT32' || to.code === 'NUMERIC';
  return false;
}

/**
 * The common supertype of expressions, or undefined. NULLs and untyped parameters adapt; a literal adapts
 * to the typed side; otherwise numeric types widen and everything else must be equal.
 */
export function supertype(xs: Typed[], d: Dialect): SqlType | undefined {
  const typed = xs.filter((x) => !adaptsToAny(x));
  if (typed.length === 0) return xs[0]?.type;
  const fixed = typed.filter((x) => !x.flex);
  const pool = fixed.length ? fixed : typed;
  let out = (pool[0] as Typed).type;
  for (const x of pool.slice(1)) {
    if (sameType(out, x.type)) continue;
    if (isNumeric(out) && isNumeric(x.type)) out = widerNumeric(out, x.type);
    else return undefined;
  }
  const literalsFit = typed.every(
    (x) => !x.flex || sameType(x.type, out) || coercible(x.type, out) || literalFits(x, out, d),
  );
  return literalsFit ? out : undefined;
}

/** Throws the service's "No matching signature" error. */
export function noSignature(what: string, args: SqlType[], supported: string, d: Dialect, at: string): never {
  if (d === 'POSTGRESQL') {
    const names = args.map((a) => typeName(a, d));
    const text =
      what.startsWith('operator ') && names.length === 2
        ? `operator does not exist: ${names[0]} ${what.slice(9)} ${names[1]}`
        : `function ${what.replace(/^function /, '').toLowerCase()}(${names.join(', ')}) does not exist`;
    throw new SpannerError(Code.INVALID_ARGUMENT, text);
  }
  const list = args.map((a) => typeName(a, d)).join(', ');
  throw new SpannerError(
    Code.INVALID_ARGUMENT,
    `No matching signature for ${what} for argument types: ${list}. Supported signature${supported.includes(';') ? 's' : ''}: ${supported}${at}`,
  );
}
