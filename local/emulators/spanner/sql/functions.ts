/**
 * Function calls: the special argument forms (COUNT(*), DISTINCT, ORDER BY in aggregates, `INTERVAL n PART`,
 * date parts as bare words) and the lookup of GoogleSQL and PostgreSQL names in the signature table.
 */
import { Code, SpannerError } from '../hooks';
import { ql } from '../storage';
import type { Expr } from './ast';
import { compileExpr, orderKey } from './compile-expr';
import { typeArg } from './convert';
import { FUNCTIONS, PG_ALIASES } from './function-table';
import type { CompileCtx, Scope } from './scope';
import { applySignatures, type Sig } from './signatures';
import { arrayOf, noSignature, type SqlType, T, type Typed } from './typing';

const PARTS = new Set(
  'NANOSECOND MICROSECOND MILLISECOND SECOND MINUTE HOUR DAY WEEK MONTH QUARTER YEAR DAYOFWEEK DAYOFYEAR DATE ISOWEEK ISOYEAR'.split(
    ' ',
  ),
);

/** A date part given as a bare word (`DAY`), or undefined. */
function partOf(e: Expr | undefined): string | undefined {
  if (e?.k === 'ident' && PARTS.has(e.name.toUpperCase())) return e.name.toUpperCase();
  return undefined;
}

function count(call: Expr & { k: 'call' }, s: Scope, cx: CompileCtx): Typed {
  if (call.star) return { sql: 'count(*)', type: T.INT64, agg: true };
  if (call.args.length !== 1) noSignature('function COUNT', [], 'COUNT(ANY)', cx.dialect, cx.at(call.pos));
  const x = compileExpr(call.args[0] as Expr, s, cx);
  return { sql: `count(${call.distinct ? 'DISTINCT ' : ''}${x.sql})`, type: T.INT64, agg: true };
}

function orderBy(call: Expr & { k: 'call' }, s: Scope, cx: CompileCtx): string {
  if (!call.orderBy?.length) return '';
  const items = call.orderBy.map((o) => `${orderKey(compileExpr(o.e, s, cx))}${o.desc ? ' DESC' : ''}`);
  return ` ORDER BY ${items.join(', ')}`;
}

function aggregate(name: string, call: Expr & { k: 'call' }, s: Scope, cx: CompileCtx): Typed | undefined {
  const d = call.distinct ? 'DISTINCT ' : '';
  if (name !== 'ARRAY_AGG' && name !== 'STRING_AGG') return undefined;
  const args = call.args.map((a) => compileExpr(a, s, cx));
  const x = args[0];
  if (!x) return noSignature(`function ${name}`, [], `${name}(ANY)`, cx.dialect, cx.at(call.pos));
  if (name === 'ARRAY_AGG') {
    if (x.type.code === 'ARRAY') cx.fail('An ARRAY_AGG cannot have an argument of type ARRAY', call.pos);
    return {
      sql: `sp_array_agg(${typeArg(x.type)}, ${d}${x.sql}${orderBy(call, s, cx)})`,
      type: arrayOf(x.type),
      agg: true,
    };
  }
  const sep = args[1]?.sql ?? `','`;
  if (x.type.code !== 'STRING')
    noSignature(
      'function STRING_AGG',
      args.map((a) => a.type),
      'STRING_AGG(STRING, [STRING])',
      cx.dialect,
      cx.at(call.pos),
    );
  return { sql: `group_concat(${d}${x.sql}, ${sep}${orderBy(call, s, cx)})`, type: T.STRING, agg: true };
}

/** TIMESTAMP_ADD(ts, INTERVAL n PART) and friends: the interval becomes (n, part). */
function dateTimeForm(name: string, call: Expr & { k: 'call' }, s: Scope, cx: CompileCtx): Typed | undefined {
  const [a0, a1, a2] = call.args;
  const adds: Record<string, [SqlType, string, string]> = {
    TIMESTAMP_ADD: [T.TIMESTAMP, 'sp_ts_add', ''],
    TIMESTAMP_SUB: [T.TIMESTAMP, 'sp_ts_add', '-'],
    DATE_ADD: [T.DATE, 'sp_date_add', ''],
    DATE_SUB: [T.DATE, 'sp_date_add', '-'],
  };
  const add = adds[name];
  if (add && a1?.k === 'interval' && a0) {
    const base = compileExpr(a0, s, cx, add[0]);
    const n = compileExpr(a1.e, s, cx, T.INT64);
    const conv = applySignatures(
      name,
      [
        {
          args: [add[0], T.INT64],
          ret: add[0],
          sql: (a) => `${add[1]}(${a[0]}, ${add[2]}(${a[1]}), ${ql(a1.part)})`,
        },
      ],
      [base, n],
      cx,
      call.pos,
    );
    return conv;
  }
  const diffs: Record<string, [SqlType, string, SqlType]> = {
    TIMESTAMP_DIFF: [T.TIMESTAMP, 'sp_ts_diff', T.INT64],
    DATE_DIFF: [T.DATE, 'sp_date_diff', T.INT64],
  };
  const diff = diffs[name];
  const p2 = partOf(a2);
  if (diff && a0 && a1 && p2) {
    const args = [compileExpr(a0, s, cx, diff[0]), compileExpr(a1, s, cx, diff[0])];
    return applySignatures(
      name,
      [{ args: [diff[0], diff[0]], ret: diff[2], sql: (a) => `${diff[1]}(${a[0]}, ${a[1]}, ${ql(p2)})` }],
      args,
      cx,
      call.pos,
    );
  }
  const truncs: Record<string, [SqlType, string]> = {
    TIMESTAMP_TRUNC: [T.TIMESTAMP, 'sp_ts_trunc'],
    DATE_TRUNC: [T.DATE, 'sp_date_trunc'],
  };
  const trunc = truncs[name];
  const p1 = partOf(a1);
  if (trunc && a0 && p1) {
    const args = [compileExpr(a0, s, cx, trunc[0])];
    return applySignatures(
      name,
      [{ args: [trunc[0]], ret: trunc[0], sql: (a) => `${trunc[1]}(${a[0]}, ${ql(p1)})` }],
      args,
      cx,
      call.pos,
    );
  }
  return undefined;
}

function extract(call: Expr & { k: 'call' }, s: Scope, cx: CompileCtx): Typed {
  const part = (call.args[0] as Expr & { k: 'lit' }).value;
  const x = compileExpr(call.args[1] as Expr, s, cx);
  if (x.type.code !== 'DATE' && x.type.code !== 'TIMESTAMP')
    noSignature(
      'function EXTRACT',
      [x.type],
      'EXTRACT(DATE_TIME_PART FROM DATE); EXTRACT(DATE_TIME_PART FROM TIMESTAMP)',
      cx.dialect,
      cx.at(call.pos),
    );
  const type = part === 'DATE' ? T.DATE : T.INT64;
  return {
    sql: `sp_extract(${ql(part)}, ${x.sql}, ${x.type.code === 'TIMESTAMP' ? 1 : 0})`,
    type,
    agg: x.agg,
  };
}

/** The canonical (GoogleSQL, upper-case) name of a function as written. */
function canonicalName(name: string, cx: CompileCtx): string {
  const upper = name.toUpperCase();
  if (cx.pg) return PG_ALIASES[upper] ?? upper;
  return upper;
}

/** Compiles a function call. */
export function callFunction(call: Expr & { k: 'call' }, s: Scope, cx: CompileCtx, expect?: SqlType): Typed {
  if (call.name === '$EXTRACT') return extract(call, s, cx);
  const name = canonicalName(call.name, cx);
  if (name.startsWith('SAFE.'))
    throw new SpannerError(Code.UNIMPLEMENTED, 'The emulator does not support the SAFE. prefix');
  if (name === 'COUNT') return count(call, s, cx);
  const special = aggregate(name, call, s, cx) ?? dateTimeForm(name, call, s, cx);
  if (special) return { ...special, name: cx.pg ? call.name.toLowerCase() : undefined };
  const sigs: Sig[] | undefined = FUNCTIONS[name];
  if (!sigs)
    return cx.fail(
      cx.pg ? `function ${call.name.toLowerCase()}() does not exist` : `Function not found: ${call.name}`,
      call.pos,
    );
  if (call.star || (call.distinct && !sigs.some((g) => g.agg)) || call.orderBy)
    return cx.fail(
      `${name} does not support ${call.star ? '*' : call.distinct ? 'DISTINCT' : 'ORDER BY'} arguments`,
      call.pos,
    );
  const args = call.args.map((a) =>
    compileExpr(a, s, cx, sigs.length === 1 ? expectOf(sigs[0] as Sig, expect) : undefined),
  );
  for (const a of args)
    if (a.agg && sigs.some((g) => g.agg)) cx.fail(`Aggregations of aggregations are not allowed`, call.pos);
  const out = applySignatures(name, sigs, args, cx, call.pos);
  const sql = call.distinct ? out.sql.replace('(', '(DISTINCT ') : out.sql;
  return { ...out, sql, name: cx.pg ? call.name.toLowerCase() : undefined };
}

function expectOf(sig: Sig, expect: SqlType | undefined): SqlType | undefined {
  return sig.ret === 'T' ? expect : undefined;
}
