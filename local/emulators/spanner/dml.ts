/**
 * DML execution: the compiled plan's query finds or produces the rows in the transaction's view, and the
 * writes go through the same row primitives as mutations, so constraints and change records behave
 * identically. THEN RETURN / RETURNING rows are evaluated on each row as written (deleted rows as they were).
 */
import { Code, SpannerError, type SpannerTypeJson, type WireValue } from './hooks';
import {
  catalogOf,
  prepare,
  type QueryContext,
  type QueryResult,
  runRaw,
  sqliteError,
  withSnapshot,
} from './query';
import type { Table } from './schema';
import { compileDml, type DmlPlan } from './sql';
import { encodeKey, type Row } from './storage';
import { rawToColumn, type StoredValue, storedToWire } from './values';
import type { Writer, WriteTxn } from './writes';

/** True when the statement is DML. */
export function isDml(sql: string): boolean {
  return /^\s*(\(\s*)?(INSERT|UPDATE|DELETE)\b/i.test(sql);
}

/** What a DML statement runs with. */
export interface DmlRun {
  ctx: QueryContext;
  txn: WriteTxn;
  writer: Writer;
  params: Record<string, WireValue>;
  types: Record<string, SpannerTypeJson>;
  /** Partitioned DML: INSERT and THEN RETURN are refused, as the service does. */
  partitioned?: boolean;
}

/** The outcome of one DML statement: rows changed, and the returned rows when it has THEN RETURN. */
export interface DmlOutcome {
  count: number;
  returned?: QueryResult;
}

class Returning {
  readonly rows: WireValue[][] = [];
  constructor(
    private readonly run: DmlRun,
    private readonly plan: DmlPlan,
  ) {}

  add(full: Row): void {
    const r = this.plan.returning;
    if (!r) return;
    const params: Record<string, StoredValue> = { ...this.plan.params };
    this.plan.table.columns.forEach((c, i) => {
      params[`__c${i}`] = full[c.name] ?? null;
    });
    const view = { snapNs: this.run.txn.snapNs, txn: this.run.txn.id };
    const stmt = prepare(this.run.ctx, withSnapshot(this.run.ctx, { ...r, startsWithWith: false }, view));
    let values: StoredValue[];
    try {
      values = stmt.safeIntegers(true).raw(true).get(params) as StoredValue[];
    } catch (err) {
      throw sqliteError(err);
    }
    this.rows.push(values.map((v, i) => storedToWire(v, (r.columns[i] as { type: SpannerTypeJson }).type)));
  }
}

function current(run: DmlRun, table: Table, key: string): Row {
  return run.ctx.storage.readRow(table, key, { snapNs: run.txn.snapNs, txn: run.txn.id }) ?? {};
}

function apply(run: DmlRun, plan: DmlPlan, rows: StoredValue[][], out: Returning): number {
  const { table } = plan;
  let count = 0;
  for (const raw of rows) {
    if (plan.kind === 'delete') {
      const full = Object.fromEntries(table.columns.map((c, i) => [c.name, raw[i] ?? null]));
      out.add(full);
      run.writer.deleteKey(table, encodeKey(table, full));
      count++;
      continue;
    }
    const row: Row = {};
    if (plan.kind === 'update') {
      table.primaryKey.forEach((k, i) => {
        row[k.name] = raw[i] ?? null;
      });
      plan.columns.forEach((c, i) => {
        row[c.name] = rawToColumn(raw[table.primaryKey.length + i] ?? null, c.ct.type);
      });
    } else
      plan.columns.forEach((c, i) => {
        row[c.name] = rawToColumn(raw[i] ?? null, c.ct.type);
      });
    const key = encodeKey(table, row);
    if (
      plan.kind === 'insert' &&
      plan.mode === 'ignore' &&
      run.ctx.storage.readRow(table, key, { snapNs: run.txn.snapNs, txn: run.txn.id })
    )
      continue;
    const kind = plan.kind === 'update' ? 'update' : plan.mode === 'update' ? 'insertOrUpdate' : 'insert';
    const named =
      plan.kind === 'insert' && plan.mode === 'insert'
        ? // Unlisted columns are written as NULL (as the service does); generated ones are computed.
          table.columns.filter((c) => !c.generated).map((c) => c.name)
        : plan.columns.map((c) => c.name);
    run.writer.write(kind, table, row, named);
    out.add(current(run, table, key));
    count++;
  }
  return count;
}

/** Executes one DML statement in a read-write transaction. */
export function runDml(run: DmlRun, sql: string): DmlOutcome {
  const plan = compileDml(sql, run.ctx.dialect, catalogOf(run.ctx), run.params, run.types);
  if (run.partitioned && plan.kind === 'insert')
    throw new SpannerError(Code.INVALID_ARGUMENT, 'INSERT is not supported in Partitioned DML.');
  if (run.partitioned && plan.returning)
    throw new SpannerError(Code.INVALID_ARGUMENT, 'THEN RETURN is not supported in Partitioned DML.');
  const rows = runRaw(run.ctx, plan, { snapNs: run.txn.snapNs, txn: run.txn.id });
  const out = new Returning(run, plan);
  const count = apply(run, plan, rows, out);
  if (!plan.returning) return { count };
  return { count, returned: { fields: plan.returning.columns, rows: out.rows } };
}
