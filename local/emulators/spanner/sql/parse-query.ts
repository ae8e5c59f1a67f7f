/**
 * Queries: WITH, SELECT (DISTINCT, AS STRUCT, `*` with EXCEPT / REPLACE), FROM with joins, subqueries and
 * UNNEST, WHERE, GROUP BY, HAVING, set operations, ORDER BY, LIMIT / OFFSET.
 */
import { Code, SpannerError } from '../hooks';
import type { Cte, Expr, From, JoinKind, Query, Select, SelectItem, SetBody } from './ast';
import type { Cursor } from './cursor';
import { exprList, parseExpr, parseOrderBy } from './parse-expr';

/** Parses a query at the cursor (not requiring the end of input). */
export function parseQuery(c: Cursor): Query {
  const pos = c.pos();
  const ctes: Cte[] = [];
  if (c.eatWord('WITH')) {
    if (c.isWord('RECURSIVE')) throw new SpannerError(Code.UNIMPLEMENTED, 'WITH RECURSIVE is not supported');
    do {
      const name = c.ident();
      c.expectWord('AS');
      c.expectOp('(');
      ctes.push({ name, query: parseQuery(c) });
      c.expectOp(')');
    } while (c.eatOp(','));
  }
  const body = setBody(c);
  const q: Query = { k: 'query', with: ctes, body, orderBy: [], pos };
  if (c.isWord('ORDER')) q.orderBy = parseOrderBy(c);
  limitOffset(c, q);
  return q;
}

function limitOffset(c: Cursor, q: Query): void {
  for (let n = 0; n < 2; n++) {
    if (c.eatWord('LIMIT')) {
      if (c.eatWord('ALL')) continue;
      q.limit = parseExpr(c);
    } else if (c.eatWord('OFFSET')) {
      q.offset = parseExpr(c);
      if (c.pg) c.eatWord('ROWS') || c.eatWord('ROW');
    }
  }
}

function setBody(c: Cursor): SetBody {
  let l = setPrimary(c);
  for (;;) {
    const op = (['UNION', 'INTERSECT', 'EXCEPT'] as const).find((w) => c.isWord(w));
    if (!op) return l;
    const pos = c.next().pos;
    const all = c.eatWord('ALL');
    if (!all && !c.eatWord('DISTINCT') && !c.pg) c.fail(`Expected keyword ALL or DISTINCT after ${op}`);
    l = { k: 'setop', op, all, l, r: setPrimary(c), pos };
  }
}

function setPrimary(c: Cursor): SetBody {
  if (c.isOp('(')) {
    c.next();
    const q = parseQuery(c);
    c.expectOp(')');
    return q;
  }
  return select(c);
}

function select(c: Cursor): Select {
  const pos = c.pos();
  c.expectWord('SELECT');
  const distinct = c.eatWord('DISTINCT');
  if (!distinct) c.eatWord('ALL');
  let as: Select['as'];
  if (c.isWord('AS') && (c.isWord('STRUCT', 1) || c.isWord('VALUE', 1))) {
    c.next();
    as = c.next().value.toUpperCase() as 'STRUCT' | 'VALUE';
  }
  const items: SelectItem[] = [];
  do items.push(selectItem(c));
  while (c.eatOp(','));
  const s: Select = { k: 'select', distinct, as, items, groupBy: [], pos };
  if (c.eatWord('FROM')) s.from = from(c);
  if (c.eatWord('WHERE')) s.where = parseExpr(c);
  if (c.isWord('GROUP')) {
    c.next();
    c.expectWord('BY');
    do s.groupBy.push(parseExpr(c));
    while (c.eatOp(','));
  }
  if (c.eatWord('HAVING')) s.having = parseExpr(c);
  return s;
}

/** One item of a SELECT list (also of THEN RETURN / RETURNING). */
export function selectItem(c: Cursor): SelectItem {
  const pos = c.pos();
  if (c.eatOp('*')) return starTail(c, undefined, pos);
  const e = parseExpr(c);
  if (c.isOp('.') && c.isOp('*', 1)) {
    c.i += 2;
    return starTail(c, e, pos);
  }
  return { k: 'item', e, alias: c.alias(), pos };
}

function starTail(c: Cursor, qualifier: Expr | undefined, pos: number): SelectItem {
  const except: string[] = [];
  const replace: Array<{ e: Expr; alias: string }> = [];
  if (c.eatWord('EXCEPT')) {
    c.expectOp('(');
    do except.push(c.ident());
    while (c.eatOp(','));
    c.expectOp(')');
  }
  if (c.eatWord('REPLACE')) {
    c.expectOp('(');
    do {
      const e = parseExpr(c);
      c.expectWord('AS');
      replace.push({ e, alias: c.ident() });
    } while (c.eatOp(','));
    c.expectOp(')');
  }
  return { k: 'star', qualifier, except, replace, pos };
}

function joinKind(c: Cursor): JoinKind | undefined {
  if (c.eatWord('JOIN')) return 'INNER';
  for (const k of ['INNER', 'LEFT', 'RIGHT', 'FULL', 'CROSS'] as const) {
    if (!c.isWord(k)) continue;
    c.next();
    c.eatWord('OUTER');
    c.expectWord('JOIN');
    return k;
  }
  return undefined;
}

function from(c: Cursor): From {
  let l = fromItem(c);
  for (;;) {
    const pos = c.pos();
    if (c.eatOp(',')) {
      l = { k: 'join', kind: 'CROSS', l, r: fromItem(c), pos };
      continue;
    }
    const kind = joinKind(c);
    if (!kind) return l;
    const r = fromItem(c);
    const j: From = { k: 'join', kind, l, r, pos };
    if (kind !== 'CROSS' && c.eatWord('ON')) j.on = parseExpr(c);
    else if (kind !== 'CROSS' && c.eatWord('USING')) {
      c.expectOp('(');
      j.using = [];
      do j.using.push(c.ident());
      while (c.eatOp(','));
      c.expectOp(')');
    } else if (kind !== 'CROSS') c.fail('Expected ON or USING after JOIN');
    l = j;
  }
}

function fromItem(c: Cursor): From {
  const pos = c.pos();
  if (c.eatOp('(')) {
    const query = parseQuery(c);
    c.expectOp(')');
    return { k: 'sub', query, alias: c.alias(), pos };
  }
  if (c.isWord('UNNEST') && c.isOp('(', 1)) {
    c.i += 2;
    const e = parseExpr(c);
    c.expectOp(')');
    const alias = c.alias();
    let offset: string | undefined;
    if (c.isWord('WITH') && c.isWord('OFFSET', 1)) {
      c.i += 2;
      offset = c.alias() ?? 'offset';
    }
    return { k: 'unnest', e, alias, offset, pos };
  }
  const path = [c.ident()];
  while (c.isOp('.') && !c.isOp('(', 2)) {
    c.next();
    path.push(c.ident());
  }
  if (c.isOp('('))
    throw new SpannerError(
      Code.INVALID_ARGUMENT,
      c.pg
        ? `function ${path.join('.')} does not exist`
        : `Table-valued function not found: ${path.join('.')}`,
    );
  return { k: 'table', path, alias: c.alias(), pos };
}

/** `(e1, e2), (…)` tuples of INSERT … VALUES. */
export function valuesRows(c: Cursor): Array<Expr[]> {
  const rows: Array<Expr[]> = [];
  do {
    c.expectOp('(');
    rows.push(exprList(c, ')'));
  } while (c.eatOp(','));
  return rows;
}
