/**
 * Parser for the SELECT subset the emulator answers: `SELECT *|columns|aggregates, … FROM table [WHERE …]
 * [GROUP BY columns|ordinals] [QUALIFY …] [ORDER BY …] [LIMIT n [OFFSET m]]`, where an aggregate is
 * `COUNT(*)`, `COUNT([DISTINCT] column)` or `ANY_VALUE(column)`, optionally compared with another by `=`.
 * Anything else is refused with BigQuery's `invalidQuery` error.
 */
import { ApiError } from './catalog';

/** One lexical token. */
export interface Token {
  kind: 'ident' | 'quoted' | 'number' | 'string' | 'op' | 'param';
  text: string;
  pos: number;
}

/** An aggregate function of a column (`COUNT` with neither column nor distinct is `COUNT(*)`). */
export type Aggregate =
  | { fn: 'COUNT'; column?: string; distinct?: boolean }
  | { fn: 'ANY_VALUE'; column: string };

/** One item of the SELECT list. */
export type SelectItem =
  | { kind: 'star' }
  /** An aggregate, or (`equals`) the BOOL of two aggregates compared with `=`. */
  | { kind: 'aggregate'; agg: Aggregate; equals?: Aggregate; alias?: string }
  | { kind: 'column'; name: string; alias?: string };

/** A parsed query. */
export interface SelectQuery {
  items: SelectItem[];
  table: string[];
  where: Token[];
  /** `GROUP BY` columns (ordinals resolved to the SELECT list's columns). */
  groupBy: string[];
  orderBy: Array<{ column: string; desc: boolean }>;
  /** `QUALIFY ROW_NUMBER() OVER (PARTITION BY … ORDER BY …) <op> n`: the dedup pattern of views. */
  qualify?: Qualify;
  limit?: number;
  offset?: number;
}

/** The one QUALIFY form the emulator runs: a row number within partitions compared with a constant. */
export interface Qualify {
  partitionBy: string[];
  orderBy: Array<{ column: string; desc: boolean }>;
  op: '=' | '<' | '<=';
  value: number;
}

const TOKEN =
  /\s*(?:(`[^`]+`)|('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|(@[A-Za-z_]\w*)|(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)|([A-Za-z_][\w-]*)|(<=|>=|<>|!=|[=<>(),.*;-]))/y;

/** A query error in BigQuery's shape (`reason: invalidQuery`). */
export function invalidQuery(message: string): ApiError {
  return new ApiError(400, 'invalidQuery', message);
}

/** Splits a query into tokens; unknown characters are a syntax error. */
export function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < sql.length) {
    if (/^\s*$/.test(sql.slice(TOKEN.lastIndex))) break;
    const start = TOKEN.lastIndex;
    const m = TOKEN.exec(sql);
    if (!m) throw invalidQuery(`Syntax error: Illegal input character at [1:${start + 1}]`);
    const pos = m.index + m[0].length - (m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5] ?? m[6] ?? '').length;
    if (m[1]) out.push({ kind: 'quoted', text: m[1].slice(1, -1), pos });
    else if (m[2]) out.push({ kind: 'string', text: m[2].slice(1, -1).replace(/\\(.)/g, '$1'), pos });
    else if (m[3]) out.push({ kind: 'param', text: m[3].slice(1), pos });
    else if (m[4]) out.push({ kind: 'number', text: m[4], pos });
    else if (m[5]) out.push({ kind: 'ident', text: m[5], pos });
    else out.push({ kind: 'op', text: m[6]!, pos });
  }
  while (out.length > 0 && out[out.length - 1]!.text === ';') out.pop();
  return out;
}

function isWord(t: Token | undefined, word: string): boolean {
  return t?.kind === 'ident' && t.text.toUpperCase() === word;
}

class Cursor {
  i = 0;
  constructor(readonly tokens: Token[]) {}
  peek(): Token | undefined {
    return this.tokens[this.i];
  }
  next(): Token {
    const t = this.tokens[this.i++];
    if (!t) throw invalidQuery('Syntax error: Unexpected end of script');
    return t;
  }
  word(w: string): boolean {
    if (!isWord(this.peek(), w)) return false;
    this.i++;
    return true;
  }
  expect(text: string): void {
    const t = this.next();
    if (t.text.toUpperCase() !== text) throw unexpected(t);
  }
  until(...words: string[]): Token[] {
    const start = this.i;
    while (this.peek() && !words.some((w) => isWord(this.peek(), w))) this.i++;
    return this.tokens.slice(start, this.i);
  }
}

function unexpected(t: Token): ApiError {
  return invalidQuery(
    `Syntax error: Unexpected ${t.kind === 'ident' ? 'identifier' : 'token'} "${t.text}" at [1:${t.pos + 1}]`,
  );
}

function name(c: Cursor): string {
  const t = c.next();
  if (t.kind !== 'ident' && t.kind !== 'quoted') throw unexpected(t);
  return t.text;
}

function alias(c: Cursor): string | undefined {
  if (c.word('AS')) return name(c);
  const t = c.peek();
  return t?.kind === 'ident' && !isWord(t, 'FROM') ? name(c) : undefined;
}

const AGGREGATES = new Set(['COUNT', 'ANY_VALUE']);

/** `COUNT(*)`, `COUNT([DISTINCT] column)` or `ANY_VALUE(column)`, the function name already read. */
function aggregate(c: Cursor, fn: string): Aggregate {
  c.expect('(');
  let agg: Aggregate;
  if (fn === 'COUNT') {
    const distinct = c.word('DISTINCT');
    if (!distinct && c.peek()?.text === '*') {
      c.next();
      agg = { fn: 'COUNT' };
    } else agg = { fn: 'COUNT', column: name(c), ...(distinct ? { distinct } : {}) };
  } else agg = { fn: 'ANY_VALUE', column: name(c) };
  c.expect(')');
  return agg;
}

function selectItem(c: Cursor): SelectItem {
  const t = c.peek();
  if (t?.text === '*') {
    c.next();
    return { kind: 'star' };
  }
  const n = name(c);
  if (c.peek()?.text !== '(') return { kind: 'column', name: n };
  const fn = n.toUpperCase();
  if (!AGGREGATES.has(fn)) throw invalidQuery(`Function not supported by the emulator: ${n}`);
  const agg = aggregate(c, fn);
  if (c.peek()?.text !== '=') return { kind: 'aggregate', agg };
  c.next();
  const other = name(c).toUpperCase();
  if (!AGGREGATES.has(other)) throw invalidQuery('The emulator compares only two aggregates with =');
  return { kind: 'aggregate', agg, equals: aggregate(c, other) };
}

function selectItems(c: Cursor): SelectItem[] {
  const items: SelectItem[] = [];
  do {
    const item = selectItem(c);
    const a = item.kind === 'star' ? undefined : alias(c);
    items.push(a && item.kind !== 'star' ? { ...item, alias: a } : item);
  } while (c.peek()?.text === ',' && c.next());
  return items;
}

/** `GROUP BY a, b` or `GROUP BY 1, 2` (ordinals of the SELECT list, which must name columns there). */
function groupBy(c: Cursor, items: SelectItem[]): string[] {
  if (!c.word('BY')) throw invalidQuery('Syntax error: Expected keyword BY');
  const out: string[] = [];
  do {
    const t = c.peek();
    if (t?.kind !== 'number') {
      out.push(name(c));
      continue;
    }
    const item = items[integer(c) - 1];
    if (item?.kind !== 'column') throw invalidQuery(`GROUP BY ordinal ${t.text} does not name a column`);
    out.push(item.name);
  } while (c.peek()?.text === ',' && c.next());
  return out;
}

function tablePath(c: Cursor): string[] {
  const parts = [name(c)];
  while (c.peek()?.text === '.') {
    c.next();
    parts.push(name(c));
  }
  return parts.flatMap((p) => p.split('.'));
}

function orderBy(c: Cursor): SelectQuery['orderBy'] {
  const out: SelectQuery['orderBy'] = [];
  do {
    const column = name(c);
    const desc = c.word('DESC');
    if (!desc) c.word('ASC');
    out.push({ column, desc });
  } while (c.peek()?.text === ',' && c.next());
  return out;
}

function qualify(c: Cursor): Qualify {
  if (!c.word('ROW_NUMBER'))
    throw invalidQuery('The emulator supports only QUALIFY ROW_NUMBER() OVER (…) = n');
  c.expect('(');
  c.expect(')');
  if (!c.word('OVER')) throw invalidQuery('Syntax error: Expected keyword OVER');
  c.expect('(');
  const partitionBy: string[] = [];
  if (c.word('PARTITION')) {
    if (!c.word('BY')) throw invalidQuery('Syntax error: Expected keyword BY');
    do partitionBy.push(name(c));
    while (c.peek()?.text === ',' && c.next());
  }
  let order: Qualify['orderBy'] = [];
  if (c.word('ORDER')) {
    if (!c.word('BY')) throw invalidQuery('Syntax error: Expected keyword BY');
    order = orderBy(c);
  }
  c.expect(')');
  const op = c.next();
  if (op.text !== '=' && op.text !== '<' && op.text !== '<=') throw unexpected(op);
  return { partitionBy, orderBy: order, op: op.text, value: integer(c) };
}

function integer(c: Cursor): number {
  const t = c.next();
  if (t.kind !== 'number' || !/^\d+$/.test(t.text)) throw unexpected(t);
  return Number(t.text);
}

/** Parses the supported SELECT subset. */
export function parseSelect(sql: string): SelectQuery {
  const c = new Cursor(tokenize(sql));
  const first = c.peek();
  if (!isWord(first, 'SELECT')) {
    throw invalidQuery(
      `The emulator answers only SELECT queries; got ${first ? `"${first.text}"` : 'an empty query'}`,
    );
  }
  c.next();
  const items = selectItems(c);
  if (!c.word('FROM')) throw invalidQuery('Syntax error: Expected keyword FROM');
  const query: SelectQuery = { items, table: tablePath(c), where: [], groupBy: [], orderBy: [] };
  if (c.word('WHERE')) query.where = c.until('ORDER', 'LIMIT', 'GROUP', 'HAVING', 'QUALIFY');
  if (c.word('GROUP')) query.groupBy = groupBy(c, items);
  if (c.word('QUALIFY')) query.qualify = qualify(c);
  if (c.word('ORDER')) {
    if (!c.word('BY')) throw invalidQuery('Syntax error: Expected keyword BY');
    query.orderBy = orderBy(c);
  }
  if (c.word('LIMIT')) {
    query.limit = integer(c);
    if (c.word('OFFSET')) query.offset = integer(c);
  }
  const rest = c.peek();
  if (rest) throw unexpected(rest);
  return query;
}
