/**
 * Expressions of both dialects by precedence climbing, with ZetaSQL's precedence for GoogleSQL (`||` binds
 * like `*`) and PostgreSQL's (`||` below `+`, `::` casts as a postfix).
 */
import { Code, SpannerError } from '../hooks';
import type { Expr, IndexMode, OrderItem } from './ast';
import type { Cursor } from './cursor';
import { parseQuery } from './parse-query';
import { parseArrayElementType, parseStructType, parseType } from './parse-type';

const GSQL_LEVELS = [['|'], ['^'], ['&'], ['<<', '>>'], ['+', '-'], ['*', '/', '||']];
const PG_LEVELS = [['||'], ['+', '-'], ['*', '/', '%']];
const COMPARE = ['=', '!=', '<>', '<', '>', '<=', '>='];
const TYPED_LITERALS: Record<string, string> = {
  DATE: 'DATE',
  TIMESTAMP: 'TIMESTAMP',
  TIMESTAMPTZ: 'TIMESTAMP',
  NUMERIC: 'NUMERIC',
  JSON: 'JSON',
  JSONB: 'JSON',
};

function unimplemented(what: string): never {
  throw new SpannerError(Code.UNIMPLEMENTED, `The emulator does not support ${what}`);
}

/** Parses one expression. */
export function parseExpr(c: Cursor): Expr {
  return orExpr(c);
}

function orExpr(c: Cursor): Expr {
  return leftAssociative(c, 'OR', andExpr);
}

function andExpr(c: Cursor): Expr {
  return leftAssociative(c, 'AND', notExpr);
}

/** `operand (word operand)*`, grouped from the left: `a OR b OR c` is `(a OR b) OR c`. */
function leftAssociative(c: Cursor, word: 'OR' | 'AND', operand: (c: Cursor) => Expr): Expr {
  let l = operand(c);
  while (c.isWord(word)) {
    const pos = c.next().pos;
    l = { k: 'binary', op: word, l, r: operand(c), pos };
  }
  return l;
}

function notExpr(c: Cursor): Expr {
  if (c.isWord('NOT')) {
    const pos = c.next().pos;
    return { k: 'unary', op: 'NOT', e: notExpr(c), pos };
  }
  return comparison(c);
}

function comparison(c: Cursor): Expr {
  const l = binary(c, 0);
  const pos = c.pos();
  const t = c.peek();
  if (t?.kind === 'op' && COMPARE.includes(t.value)) {
    c.next();
    return { k: 'binary', op: t.value === '<>' ? '!=' : t.value, l, r: binary(c, 0), pos };
  }
  if (c.isWord('IS')) return isExpr(c, l);
  const not = c.isWord('NOT') && (c.isWord('LIKE', 1) || c.isWord('IN', 1) || c.isWord('BETWEEN', 1));
  if (not) c.next();
  if (c.eatWord('LIKE')) return { k: 'like', e: l, pattern: binary(c, 0), not, pos };
  if (c.eatWord('BETWEEN')) {
    const lo = binary(c, 0);
    c.expectWord('AND');
    return { k: 'between', e: l, lo, hi: binary(c, 0), not, pos };
  }
  if (c.eatWord('IN')) return inExpr(c, l, not, pos);
  if (c.isWord('ILIKE') || c.isWord('SIMILAR')) unimplemented(`${c.peek()?.value} in queries`);
  return l;
}

function isExpr(c: Cursor, e: Expr): Expr {
  const pos = c.next().pos;
  const not = c.eatWord('NOT');
  for (const what of ['NULL', 'TRUE', 'FALSE'] as const)
    if (c.eatWord(what)) return { k: 'is', e, what, not, pos };
  if (c.isWord('DISTINCT')) unimplemented('IS DISTINCT FROM');
  return c.fail('Expected NULL, TRUE or FALSE after IS');
}

function inExpr(c: Cursor, e: Expr, not: boolean, pos: number): Expr {
  if (c.eatWord('UNNEST')) {
    c.expectOp('(');
    const unnest = parseExpr(c);
    c.expectOp(')');
    return { k: 'in', e, not, unnest, pos };
  }
  c.expectOp('(');
  if (c.isWord('SELECT') || c.isWord('WITH')) {
    const query = parseQuery(c);
    c.expectOp(')');
    return { k: 'in', e, not, query, pos };
  }
  const list = exprList(c, ')');
  return { k: 'in', e, not, list, pos };
}

/** Comma-separated expressions up to (and consuming) `close`. */
export function exprList(c: Cursor, close: string): Expr[] {
  const out: Expr[] = [];
  if (c.eatOp(close)) return out;
  do out.push(parseExpr(c));
  while (c.eatOp(','));
  c.expectOp(close);
  return out;
}

function binary(c: Cursor, level: number): Expr {
  const levels = c.pg ? PG_LEVELS : GSQL_LEVELS;
  if (level >= levels.length) return unary(c);
  let l = binary(c, level + 1);
  for (;;) {
    const t = c.peek();
    if (t?.kind !== 'op' || !(levels[level] as string[]).includes(t.value)) return l;
    c.next();
    l = { k: 'binary', op: t.value, l, r: binary(c, level + 1), pos: t.pos };
  }
}

function unary(c: Cursor): Expr {
  const t = c.peek();
  if (t?.kind === 'op' && (t.value === '-' || t.value === '+' || t.value === '~')) {
    c.next();
    const e = unary(c);
    if (t.value === '-' && e.k === 'lit' && (e.kind === 'int' || e.kind === 'float') && e.pos === t.pos + 1)
      return { ...e, value: `-${e.value}`, pos: t.pos };
    return { k: 'unary', op: t.value === '-' ? 'NEG' : t.value === '+' ? 'PLUS' : 'BITNOT', e, pos: t.pos };
  }
  return postfix(c, primary(c));
}

function postfix(c: Cursor, base: Expr): Expr {
  let e = base;
  for (;;) {
    const pos = c.pos();
    if (c.isOp('.') && !c.isOp('*', 1)) {
      c.next();
      e = { k: 'dot', base: e, name: c.ident(), pos };
    } else if (c.isOp('[')) {
      c.next();
      e = subscript(c, e, pos);
    } else if (c.pg && c.eatOp('::')) {
      e = { k: 'cast', e, to: parseType(c), safe: false, pos };
    } else return e;
  }
}

function subscript(c: Cursor, base: Expr, pos: number): Expr {
  for (const mode of ['OFFSET', 'ORDINAL', 'SAFE_OFFSET', 'SAFE_ORDINAL'] as IndexMode[]) {
    if (c.isWord(mode) && c.isOp('(', 1)) {
      c.i += 2;
      const index = parseExpr(c);
      c.expectOp(')');
      c.expectOp(']');
      return { k: 'index', base, index, mode, pos };
    }
  }
  const index = parseExpr(c);
  c.expectOp(']');
  // PostgreSQL arrays count from 1 and answer NULL out of range.
  return { k: 'index', base, index, mode: c.pg ? 'SAFE_ORDINAL' : 'BARE', pos };
}

function primary(c: Cursor): Expr {
  const t = c.next();
  switch (t.kind) {
    case 'number':
      return number(c, t.value, t.pos);
    case 'string':
      return { k: 'lit', kind: 'string', value: t.value, pos: t.pos };
    case 'bytes':
      return { k: 'lit', kind: 'bytes', value: t.value, pos: t.pos };
    case 'param':
      return { k: 'param', name: c.pg ? `p${t.value}` : t.value, pos: t.pos };
    case 'qident':
      return { k: 'ident', name: t.value, pos: t.pos };
    case 'ident':
      return word(c, t.value, t.pos);
    default:
      if (t.value === '(') return parenthesized(c, t.pos);
      if (t.value === '[') return { k: 'arrayLit', elems: exprList(c, ']'), pos: t.pos };
      return c.fail('Unexpected token', t.pos);
  }
}

function number(c: Cursor, value: string, pos: number): Expr {
  const next = c.peek();
  if (
    value === '0' &&
    next?.kind === 'ident' &&
    next.pos === pos + 1 &&
    /^[xX][0-9a-fA-F]+$/.test(next.value)
  ) {
    c.next();
    return { k: 'lit', kind: 'int', value: BigInt(`0x${next.value.slice(1)}`).toString(), pos };
  }
  return { k: 'lit', kind: /^\d+$/.test(value) ? 'int' : 'float', value, pos };
}

function parenthesized(c: Cursor, pos: number): Expr {
  if (c.isWord('SELECT') || c.isWord('WITH')) {
    const query = parseQuery(c);
    c.expectOp(')');
    return { k: 'subquery', query, pos };
  }
  const first = parseExpr(c);
  if (c.eatOp(')')) return first;
  c.expectOp(',');
  const rest = exprList(c, ')');
  return { k: 'struct', fields: [first, ...rest].map((e) => ({ e })), pos };
}

function word(c: Cursor, value: string, pos: number): Expr {
  const w = value.toUpperCase();
  if (w === 'TRUE' || w === 'FALSE') return { k: 'lit', kind: 'bool', value: w, pos };
  if (w === 'NULL') return { k: 'lit', kind: 'null', value: w, pos };
  if (w === 'DEFAULT') return { k: 'default', pos };
  const special = specialForm(c, w, pos);
  if (special) return special;
  const typed = TYPED_LITERALS[w];
  const next = c.peek();
  if (typed && next?.kind === 'string') {
    c.next();
    const type =
      typed === 'NUMERIC' && c.pg ? { code: 'NUMERIC', typeAnnotation: 'PG_NUMERIC' } : { code: typed };
    return {
      k: 'typedLit',
      type: typed === 'JSON' && c.pg ? { code: 'JSON', typeAnnotation: 'PG_JSONB' } : type,
      value: next.value,
      pos,
    };
  }
  if (c.isOp('(')) return call(c, value, pos);
  if (c.isOp('.') && c.peek(1)?.kind === 'ident' && c.isOp('(', 2)) {
    c.next();
    const fn = c.next().value;
    return call(c, `${value}.${fn}`, pos);
  }
  if (w === 'CURRENT_TIMESTAMP' || w === 'CURRENT_DATE')
    return { k: 'call', name: w, args: [], distinct: false, star: false, pos };
  return { k: 'ident', name: c.pg ? value.toLowerCase() : value, pos };
}

function specialForm(c: Cursor, w: string, pos: number): Expr | undefined {
  switch (w) {
    case 'CASE':
      return caseExpr(c, pos);
    case 'CAST':
    case 'SAFE_CAST':
      if (!c.isOp('(')) return undefined;
      return castExpr(c, w === 'SAFE_CAST', pos);
    case 'EXISTS': {
      c.expectOp('(');
      const query = parseQuery(c);
      c.expectOp(')');
      return { k: 'exists', query, pos };
    }
    case 'ARRAY':
      return arrayExpr(c, pos);
    case 'STRUCT':
      return structExpr(c, pos);
    case 'EXTRACT': {
      c.expectOp('(');
      const part = c.ident().toUpperCase();
      c.expectWord('FROM');
      const e = parseExpr(c);
      if (c.isWord('AT')) unimplemented('EXTRACT … AT TIME ZONE');
      c.expectOp(')');
      return { k: 'extract', part, e, pos };
    }
    case 'INTERVAL': {
      // Only as an argument of TIMESTAMP_ADD / DATE_ADD and friends: `INTERVAL 5 DAY`.
      if (c.pg) return unimplemented('INTERVAL values');
      const e = binary(c, 0);
      return { k: 'interval', e, part: c.ident().toUpperCase(), pos };
    }
    default:
      return undefined;
  }
}

function caseExpr(c: Cursor, pos: number): Expr {
  const operand = c.isWord('WHEN') ? undefined : parseExpr(c);
  const whens: Array<{ when: Expr; result: Expr }> = [];
  while (c.eatWord('WHEN')) {
    const when = parseExpr(c);
    c.expectWord('THEN');
    whens.push({ when, result: parseExpr(c) });
  }
  const otherwise = c.eatWord('ELSE') ? parseExpr(c) : undefined;
  c.expectWord('END');
  return { k: 'case', operand, whens, else: otherwise, pos };
}

function castExpr(c: Cursor, safe: boolean, pos: number): Expr {
  c.expectOp('(');
  const e = parseExpr(c);
  c.expectWord('AS');
  const to = parseType(c);
  c.expectOp(')');
  return { k: 'cast', e, to, safe, pos };
}

function arrayExpr(c: Cursor, pos: number): Expr {
  if (c.isOp('(')) {
    c.next();
    const query = parseQuery(c);
    c.expectOp(')');
    return { k: 'arraySubquery', query, pos };
  }
  const elemType = c.isOp('<') ? parseArrayElementType(c) : undefined;
  c.expectOp('[');
  return { k: 'arrayLit', elems: exprList(c, ']'), elemType, pos };
}

function structExpr(c: Cursor, pos: number): Expr {
  const type = c.isOp('<') || c.isOp('<>') ? parseStructType(c) : undefined;
  c.expectOp('(');
  const fields: Array<{ e: Expr; alias?: string }> = [];
  if (!c.eatOp(')')) {
    do {
      const e = parseExpr(c);
      fields.push({ e, alias: c.eatWord('AS') ? c.ident() : undefined });
    } while (c.eatOp(','));
    c.expectOp(')');
  }
  return { k: 'struct', fields, type, pos };
}

function call(c: Cursor, name: string, pos: number): Expr {
  c.expectOp('(');
  const distinct = c.eatWord('DISTINCT');
  if (c.isOp('*') && c.isOp(')', 1)) {
    c.i += 2;
    return { k: 'call', name, args: [], distinct, star: true, pos };
  }
  const args: Expr[] = [];
  let orderBy: OrderItem[] | undefined;
  if (!c.isOp(')')) {
    do args.push(parseExpr(c));
    while (c.eatOp(','));
  }
  if (c.isWord('IGNORE') || c.isWord('RESPECT')) unimplemented('IGNORE / RESPECT NULLS');
  if (c.isWord('ORDER')) orderBy = parseOrderBy(c);
  if (c.isWord('LIMIT')) unimplemented('LIMIT inside an aggregate');
  c.expectOp(')');
  if (c.isWord('OVER')) unimplemented('analytic functions (OVER)');
  return { k: 'call', name, args, distinct, star: false, pos, orderBy };
}

/** `ORDER BY e [ASC|DESC] [NULLS FIRST|LAST], …` at the cursor. */
export function parseOrderBy(c: Cursor): OrderItem[] {
  c.expectWord('ORDER');
  c.expectWord('BY');
  const items: OrderItem[] = [];
  do {
    const e = parseExpr(c);
    const desc = c.eatWord('DESC');
    if (!desc) c.eatWord('ASC');
    let nulls: OrderItem['nulls'];
    if (c.eatWord('NULLS')) {
      if (!c.eatWord('FIRST')) c.expectWord('LAST');
      nulls = c.toks[c.i - 1]?.value.toUpperCase() === 'FIRST' ? 'FIRST' : 'LAST';
    }
    items.push({ e, desc, nulls });
  } while (c.eatOp(','));
  return items;
}
