/**
 * Type names inside queries: `CAST(x AS ARRAY<STRING>)`, `STRUCT<a INT64, b STRING>(…)`, `ARRAY<INT64>[…]`
 * in GoogleSQL; `x::bigint`, `CAST(x AS varchar(10)[])`, `::oid` in PostgreSQL.
 */
import { Code, SpannerError, type SpannerTypeJson } from '../hooks';
import { GSQL_SCALAR_NAMES, matchPgTypeName } from '../type-names';
import { at, type Cursor } from './cursor';

/** GoogleSQL names in a query: the scalars, and STRING / BYTES (whose length is skipped). */
const GSQL = new Set<string>([...GSQL_SCALAR_NAMES, 'STRING', 'BYTES']);

/** Skips `(n)` / `(MAX)` / `(p, s)` after a type name. */
function skipLength(c: Cursor): void {
  if (!c.isOp('(')) return;
  c.next();
  while (!c.eatOp(')')) c.next();
}

function gsqlType(c: Cursor): SpannerTypeJson {
  const pos = c.pos();
  const word = c.ident().toUpperCase();
  if (word === 'ARRAY') {
    return { code: 'ARRAY', arrayElementType: parseArrayElementType(c) };
  }
  if (word === 'STRUCT') return structType(c);
  const t: SpannerTypeJson | undefined = GSQL.has(word) ? { code: word } : undefined;
  if (!t && c.isOp('.'))
    // A dotted name is a proto message or enum type: the emulator keeps no descriptors for SQL.
    throw new SpannerError(
      Code.UNIMPLEMENTED,
      `Proto and enum types in SQL expressions (CAST, typed literals) are not supported by the emulator${at(c.src, pos)}`,
    );
  if (!t)
    throw new SpannerError(Code.INVALID_ARGUMENT, `Type not found: ${word}${c.pg ? '' : at(c.src, pos)}`);
  skipLength(c);
  return t;
}

/** Consumes one `>`, splitting a `>>` token (as in `ARRAY<STRUCT<a INT64>>`). */
function closeAngle(c: Cursor): void {
  const t = c.peek();
  if (t?.kind === 'op' && t.value === '>>') {
    c.toks.splice(c.i, 1, { ...t, value: '>' }, { ...t, value: '>', pos: t.pos + 1 });
  }
  c.expectOp('>');
}

/** `STRUCT<[name] type, …>` after the word STRUCT. */
function structType(c: Cursor): SpannerTypeJson {
  const fields: Array<{ name: string; type: SpannerTypeJson }> = [];
  if (c.eatOp('<>')) return { code: 'STRUCT', structType: { fields } };
  c.expectOp('<');
  for (;;) {
    if (c.isOp('>') || c.isOp('>>')) break;
    if (fields.length) c.expectOp(',');
    // A field is `name type` or just `type`: a name is followed by another word or `<`-less type.
    const named = (c.peek(1)?.kind === 'ident' || c.peek(1)?.kind === 'qident') && !c.isOp('<', 1);
    const name = named ? c.ident() : '';
    fields.push({ name, type: gsqlType(c) });
  }
  closeAngle(c);
  return { code: 'STRUCT', structType: { fields } };
}

function pgType(c: Cursor): SpannerTypeJson {
  const words = Array.from({ length: 4 }, (_, k) => {
    const w = c.peek(k);
    return w?.kind === 'ident' ? w.value : undefined;
  });
  const found = matchPgTypeName(words, false);
  if (!found) throw new SpannerError(Code.INVALID_ARGUMENT, `type "${c.peek()?.value ?? ''}" does not exist`);
  c.i += found.used;
  skipLength(c);
  let t = found.type;
  while (c.isOp('[') && c.isOp(']', 1)) {
    c.i += 2;
    t = { code: 'ARRAY', arrayElementType: t };
  }
  return t;
}

/** Parses a type name at the cursor. */
export function parseType(c: Cursor): SpannerTypeJson {
  return c.pg ? pgType(c) : gsqlType(c);
}

/** `STRUCT<…>` when the cursor is at the `<` after STRUCT. */
export function parseStructType(c: Cursor): SpannerTypeJson {
  return structType(c);
}

/** `ARRAY<T>` element type when the cursor is at the `<` after ARRAY. */
export function parseArrayElementType(c: Cursor): SpannerTypeJson {
  c.expectOp('<');
  const el = gsqlType(c);
  closeAngle(c);
  return el;
}
