/**
 * DML: INSERT (VALUES or SELECT), UPDATE ... SET ... WHERE and DELETE ... WHERE, in both dialects. The
 * affected rows are found by running a SELECT over the transaction's view; the writes then go through the
 * same row primitives as mutations, so constraints and change records behave identically.
 */
import { Code, SpannerError } from './hooks';
import { type QueryContext, runRaw } from './query';
import type { Column, Table } from './schema';
import { encodeKey as encodeRowKey, qi } from './storage';
import { closingParen, identName, isOp, isWord, splitTopLevel, type Token, tokenize } from './tokenizer';
import { translate } from './translate';
import { rawToColumn, type StoredValue } from './values';
import type { Writer, WriteTxn } from './writes';

/** True when the statement is DML. */
export function isDml(sql: string): boolean {
  return /^\s*(\(\s*)?(INSERT|UPDATE|DELETE)\b/i.test(sql);
}

function unsupported(what: string): never {
  throw new SpannerError(Code.UNIMPLEMENTED, `The emulator does not support ${what} in DML`);
}

interface DmlRun {
  ctx: QueryContext;
  txn: WriteTxn;
  writer: Writer;
  params: Record<string, StoredValue>;
}

function select(run: DmlRun, tokens: Token[]): StoredValue[][] {
  const view = { snapNs: run.txn.snapNs, txn: run.txn.id };
  return runRaw(run.ctx, translate(tokens, run.ctx.dialect, run.ctx.schema), view, run.params).rows;
}

function toks(sql: string, run: DmlRun): Token[] {
  return tokenize(sql, run.ctx.dialect);
}

function rejectReturning(tokens: Token[]): void {
  tokens.forEach((t, i) => {
    if (isWord(t, 'RETURNING') || (isWord(t, 'THEN') && isWord(tokens[i + 1], 'RETURN')))
      unsupported('THEN RETURN / RETURNING');
    if (isWord(t, 'ON') && isWord(tokens[i + 1], 'CONFLICT')) unsupported('ON CONFLICT');
  });
}

function runInsert(run: DmlRun, tokens: Token[]): number {
  const d = run.ctx.dialect;
  let i = 1;
  if (isWord(tokens[i], 'OR')) unsupported('INSERT OR UPDATE / INSERT OR IGNORE');
  if (isWord(tokens[i], 'INTO')) i++;
  const table = run.ctx.schema.get(identName(tokens[i], d));
  if (!isOp(tokens[i + 1], '('))
    throw new SpannerError(Code.INVALID_ARGUMENT, 'INSERT requires a column list');
  const close = closingParen(tokens, i + 1);
  const columns = splitTopLevel(tokens.slice(i + 2, close)).map((p) =>
    run.ctx.schema.column(table, identName(p[0], d)),
  );
  const rest = tokens.slice(close + 1);
  let rows: StoredValue[][];
  if (isWord(rest[0], 'VALUES')) {
    const tuples = splitTopLevel(rest.slice(1)).map((p) => p.slice(1, -1));
    const selects = tuples.flatMap((t, n) => [
      ...(n
        ? [
            { kind: 'ident', value: 'UNION', pos: -1 },
            { kind: 'ident', value: 'ALL', pos: -1 },
          ]
        : []),
      { kind: 'ident', value: 'SELECT', pos: -1 },
      ...t,
    ]) as Token[];
    rows = select(run, selects);
  } else rows = select(run, rest);
  for (const raw of rows) {
    if (raw.length !== columns.length)
      throw new SpannerError(Code.INVALID_ARGUMENT, 'Inserted row has the wrong number of column values');
    const row = Object.fromEntries(columns.map((c, n) => [c.name, rawToColumn(raw[n] ?? null, c.ct.type)]));
    // Unlisted columns are written as NULL (the service does the same); generated ones are computed.
    const unlisted = table.columns.filter((c) => !c.generated && !(c.name in row));
    for (const c of unlisted) row[c.name] = null;
    run.writer.write(
      'insert',
      table,
      row,
      table.columns.filter((c) => c.name in row).map((c) => c.name),
    );
  }
  return rows.length;
}

function whereClause(tokens: Token[], from: number, run: DmlRun, verb: string): Token[] {
  const at = tokens.findIndex((t, n) => n >= from && isWord(t, 'WHERE'));
  if (at < 0 && run.ctx.dialect === 'GOOGLE_STANDARD_SQL')
    throw new SpannerError(Code.INVALID_ARGUMENT, `A WHERE clause is required in a ${verb} statement`);
  return at < 0 ? [] : tokens.slice(at);
}

function targetTable(tokens: Token[], i: number, run: DmlRun): [Table, Token[], number] {
  const table = run.ctx.schema.get(identName(tokens[i], run.ctx.dialect));
  let j = i + 1;
  const alias: Token[] = [];
  if (isWord(tokens[j], 'AS')) j++;
  if (tokens[j]?.kind === 'ident' && !['SET', 'WHERE'].includes((tokens[j] as Token).value.toUpperCase())) {
    alias.push(tokens[j] as Token);
    j++;
  }
  return [table, alias, j];
}

function keySelect(table: Table, extra: string, alias: Token[], where: Token[], run: DmlRun): Token[] {
  const q = (n: string) => (run.ctx.dialect === 'POSTGRESQL' ? qi(n) : `\`${n}\``);
  const keys = table.primaryKey.map((k) => q(k.name)).join(', ');
  return [...toks(`SELECT ${keys}${extra} FROM ${q(table.name)}`, run), ...alias, ...where];
}

function runUpdate(run: DmlRun, tokens: Token[]): number {
  const [table, alias, j] = targetTable(tokens, 1, run);
  if (!isWord(tokens[j], 'SET')) throw new SpannerError(Code.INVALID_ARGUMENT, 'Expected SET in UPDATE');
  const where = whereClause(tokens, j, run, 'UPDATE');
  const end = where.length ? tokens.length - where.length : tokens.length;
  const assigns = splitTopLevel(tokens.slice(j + 1, end)).map((p) => {
    const eq = p.findIndex((t) => isOp(t, '='));
    const col = run.ctx.schema.column(table, identName(p[eq - 1], run.ctx.dialect));
    if (table.primaryKey.some((k) => k.name === col.name))
      throw new SpannerError(
        Code.INVALID_ARGUMENT,
        `Cannot UPDATE value on non-writable column: ${col.name}`,
      );
    return { col, expr: p.slice(eq + 1) };
  });
  const sel = keySelect(table, '', alias, where, run);
  const fromAt = sel.findIndex((t) => isWord(t, 'FROM'));
  const exprTokens = assigns.flatMap((a) => [
    { kind: 'op', value: ',', pos: -1 },
    { kind: 'op', value: '(', pos: -1 },
    ...a.expr,
    { kind: 'op', value: ')', pos: -1 },
  ]) as Token[];
  const rows = select(run, [...sel.slice(0, fromAt), ...exprTokens, ...sel.slice(fromAt)]);
  const nk = table.primaryKey.length;
  for (const raw of rows) {
    const row: Record<string, StoredValue> = {};
    table.primaryKey.forEach((k, n) => {
      row[k.name] = raw[n] ?? null;
    });
    assigns.forEach((a, n) => {
      row[a.col.name] = rawToColumn(raw[nk + n] ?? null, a.col.ct.type);
    });
    run.writer.write(
      'update',
      table,
      row,
      assigns.map((a) => a.col.name),
    );
  }
  return rows.length;
}

function runDelete(run: DmlRun, tokens: Token[]): number {
  const [table, alias, j] = targetTable(tokens, isWord(tokens[1], 'FROM') ? 2 : 1, run);
  const where = whereClause(tokens, j, run, 'DELETE');
  const rows = select(run, keySelect(table, '', alias, where, run));
  for (const raw of rows) {
    const row: Record<string, StoredValue> = {};
    table.primaryKey.forEach((k, n) => {
      const col = table.columns.find((c) => c.name === k.name) as Column;
      row[k.name] = rawToColumn(raw[n] ?? null, col.ct.type);
    });
    run.writer.deleteKey(table, encodeRowKey(table, row));
  }
  return rows.length;
}

/** Executes one DML statement in a read-write transaction; returns the number of rows it changed. */
export function runDml(run: DmlRun, sql: string): number {
  const tokens = tokenize(sql.trim().replace(/;\s*$/, ''), run.ctx.dialect);
  rejectReturning(tokens);
  if (isWord(tokens[0], 'INSERT')) return runInsert(run, tokens);
  if (isWord(tokens[0], 'UPDATE')) return runUpdate(run, tokens);
  if (isWord(tokens[0], 'DELETE')) return runDelete(run, tokens);
  return unsupported(`statement ${tokens[0]?.value ?? ''}`);
}
