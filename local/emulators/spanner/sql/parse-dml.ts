/**
 * DML statements of both dialects: INSERT [OR UPDATE | OR IGNORE] … VALUES / SELECT, UPDATE … SET … WHERE,
 * DELETE [FROM] … WHERE, with GoogleSQL's THEN RETURN and PostgreSQL's RETURNING.
 */
import { Code, SpannerError } from '../hooks';
import type { Dialect } from '../tokenizer';
import type { Dml, Expr, SelectItem } from './ast';
import { Cursor } from './cursor';
import { parseExpr } from './parse-expr';
import { parseQuery, selectItem, valuesRows } from './parse-query';

/** The conflict action of GoogleSQL `INSERT OR UPDATE` / `INSERT OR IGNORE`. */
export type InsertMode = 'insert' | 'update' | 'ignore';

function returning(c: Cursor): SelectItem[] | undefined {
  const gsql = !c.pg && c.isWord('THEN') && c.isWord('RETURN', 1);
  if (!gsql && !(c.pg && c.isWord('RETURNING'))) return undefined;
  c.i += gsql ? 2 : 1;
  if (c.isWord('WITH') && c.isWord('ACTION', 1))
    throw new SpannerError(Code.UNIMPLEMENTED, 'THEN RETURN WITH ACTION is not supported by the emulator');
  const items: SelectItem[] = [];
  do items.push(selectItem(c));
  while (c.eatOp(','));
  return items;
}

/** `t`, `sch.t` (a named schema's table keeps its qualified name), PostgreSQL's `public.t` (is `t`). */
function tableName(c: Cursor): string {
  const parts = [c.ident()];
  while (c.eatOp('.')) parts.push(c.ident());
  if (parts.length === 2 && c.pg && parts[0] === 'public') return parts[1] as string;
  return parts.join('.');
}

function insert(c: Cursor, pos: number): Dml & { mode: InsertMode } {
  let mode: InsertMode = 'insert';
  if (c.eatWord('OR')) {
    if (c.eatWord('UPDATE')) mode = 'update';
    else if (c.eatWord('IGNORE')) mode = 'ignore';
    else c.fail('Expected UPDATE or IGNORE after INSERT OR');
  }
  c.eatWord('INTO');
  const table = tableName(c);
  if (!c.isOp('(')) throw new SpannerError(Code.INVALID_ARGUMENT, 'INSERT requires a column list');
  c.next();
  const columns: string[] = [];
  do columns.push(c.ident());
  while (c.eatOp(','));
  c.expectOp(')');
  const out: Dml & { mode: InsertMode } = { k: 'insert', table, columns, pos, mode };
  if (c.eatWord('VALUES')) out.values = valuesRows(c);
  else out.query = parseQuery(c);
  if (c.isWord('ON') && c.isWord('CONFLICT', 1))
    throw new SpannerError(Code.UNIMPLEMENTED, 'The emulator does not support ON CONFLICT in DML');
  out.returning = returning(c);
  return out;
}

function targetAlias(c: Cursor, stop: string): string | undefined {
  if (c.eatWord('AS')) return c.ident();
  return c.aliasNext() && !c.isWord(stop) ? c.ident() : undefined;
}

function update(c: Cursor, pos: number): Dml {
  const table = tableName(c);
  const alias = targetAlias(c, 'SET');
  c.expectWord('SET');
  const set: Array<{ column: string; e: Expr; pos: number }> = [];
  do {
    const at = c.pos();
    let column = c.ident();
    while (c.eatOp('.')) column = c.ident();
    c.expectOp('=');
    set.push({ column, e: parseExpr(c), pos: at });
  } while (c.eatOp(','));
  const where = c.eatWord('WHERE') ? parseExpr(c) : undefined;
  return { k: 'update', table, alias, set, where, returning: returning(c), pos };
}

function del(c: Cursor, pos: number): Dml {
  c.eatWord('FROM');
  const table = tableName(c);
  const alias = targetAlias(c, 'WHERE');
  const where = c.eatWord('WHERE') ? parseExpr(c) : undefined;
  return { k: 'delete', table, alias, where, returning: returning(c), pos };
}

/** Parses one DML statement (the whole text). */
export function parseDml(sql: string, dialect: Dialect): Dml & { mode?: InsertMode } {
  const c = new Cursor(sql.trim().replace(/;\s*$/, ''), dialect);
  const pos = c.pos();
  let out: Dml & { mode?: InsertMode };
  if (c.eatWord('INSERT')) out = insert(c, pos);
  else if (c.eatWord('UPDATE')) out = update(c, pos);
  else if (c.eatWord('DELETE')) out = del(c, pos);
  else return c.fail('Expected INSERT, UPDATE or DELETE');
  if (!c.done()) c.fail('Expected end of statement');
  return out;
}
