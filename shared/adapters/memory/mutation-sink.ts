/**
 * In-memory `MutationSink`: tables from a writer catalog, rows by key, the service's codes (and the
 * official emulator's messages) for the cases the writer classifies — existing and missing rows, unknown
 * tables and columns, NOT NULL — plus scripted faults (a call that fails, breaks after K reports with or
 * without applying the rest, reports chosen statuses, or hangs) and a count of commits per row.
 */
import { GrpcCode } from '../../domain/errors';
import { fromNanos } from '../../domain/timestamp';
import { findColumn, findTable, type WriterCatalog, type WriterTable } from '../../domain/writer/catalog';
import type { TypedMutation } from '../../domain/writer/mutations';
import type { GroupStatus } from '../../domain/writer/policy';
import type { WireValue } from '../../domain/writer/values';
import type {
  BatchWriteOptions,
  BatchWriteResult,
  GroupReport,
  MutationSink,
} from '../../ports/mutation-sink';

/** A scripted fault of the next call. */
export type MemorySinkFault =
  | { kind: 'fail'; code: number; message?: string }
  | { kind: 'break'; after: number; code: number; applyRest?: boolean }
  | { kind: 'status'; positions: number[]; code: number; message?: string }
  | { kind: 'hang' };

type Row = Record<string, WireValue>;

class Rejection extends Error {
  constructor(readonly status: GroupStatus) {
    super(status.message);
  }
}

const reject = (code: number, message: string): never => {
  throw new Rejection({ code, message });
};

/** Mutation sink over maps. */
export class MemoryMutationSink implements MutationSink {
  /** Rows by table, then by key (JSON of the key values). */
  readonly tables = new Map<string, Map<string, Row>>();
  /** Successful commits per row (`Table [key]`). */
  readonly commits = new Map<string, number>();
  /** Every call's mutations, in order. */
  readonly calls: TypedMutation[][] = [];
  private readonly faults: MemorySinkFault[] = [];
  private clock = 1_700_000_000_000_000_000n;

  constructor(public catalog: WriterCatalog) {}

  /** Queues a fault for the next call (one fault per call, in order). */
  inject(fault: MemorySinkFault): void {
    this.faults.push(fault);
  }

  /** The rows of a table, by key JSON. */
  rowsOf(table: string): Map<string, Row> {
    const rows = this.tables.get(table) ?? new Map<string, Row>();
    this.tables.set(table, rows);
    return rows;
  }

  async batchWrite(mutations: TypedMutation[], options: BatchWriteOptions): Promise<BatchWriteResult> {
    this.calls.push(mutations);
    const fault = this.faults.shift();
    if (fault?.kind === 'fail')
      return { reports: [], callError: { code: fault.code, message: fault.message ?? 'injected' } };
    if (fault?.kind === 'hang') {
      await new Promise((r) => setTimeout(r, options.timeoutMs));
      return { reports: [], callError: { code: GrpcCode.DEADLINE_EXCEEDED, message: 'injected hang' } };
    }
    const reports: GroupReport[] = [];
    for (const [position, m] of mutations.entries()) {
      const broken = fault?.kind === 'break' && position >= fault.after;
      if (broken && !fault.applyRest) break;
      const injected = fault?.kind === 'status' && fault.positions.includes(position);
      const report = injected
        ? { position, status: { code: fault.code, message: fault.message ?? 'injected' } }
        : this.commit(position, m);
      if (!broken) reports.push(report);
    }
    if (fault?.kind === 'break' && fault.after < mutations.length)
      return { reports, callError: { code: fault.code, message: 'injected broken stream' } };
    return { reports };
  }

  private commit(position: number, m: TypedMutation): GroupReport {
    try {
      this.apply(m);
      this.commits.set(m.rowKey, (this.commits.get(m.rowKey) ?? 0) + 1);
      this.clock += 1_000n;
      return { position, status: { code: GrpcCode.OK, message: '' }, commitTimestamp: fromNanos(this.clock) };
    } catch (err) {
      if (err instanceof Rejection) return { position, status: err.status };
      throw err;
    }
  }

  private apply(m: TypedMutation): void {
    const table =
      findTable(this.catalog, m.table) ?? reject(GrpcCode.NOT_FOUND, `Table not found: ${m.table}`);
    const rows = this.rowsOf(table.name);
    const named: Row = {};
    m.columns.forEach((c, i) => {
      const col =
        findColumn(this.catalog, table, c) ??
        reject(GrpcCode.NOT_FOUND, `Column not found in table ${table.name}: ${c}`);
      named[col.name] = m.values[i] ?? null;
    });
    const key = JSON.stringify(table.primaryKey.map((k) => named[k] ?? null));
    const existing = rows.get(key);
    const keyText = `{${table.primaryKey.map((k) => String(named[k])).join(', ')}}`;
    if (m.op === 'delete') {
      rows.delete(key);
      return;
    }
    if (m.op === 'insert' && existing)
      reject(GrpcCode.ALREADY_EXISTS, `Table ${table.name}: Row ${keyText} already exists.`);
    if (m.op === 'update' && !existing)
      reject(GrpcCode.NOT_FOUND, `Table ${table.name}: Row ${keyText} not found.`);
    const base = m.op === 'replace' || !existing ? {} : existing;
    const row = { ...base, ...named };
    checkNotNull(table, named, row);
    rows.set(key, row);
  }
}

function checkNotNull(table: WriterTable, named: Row, row: Row): void {
  for (const c of table.columns) {
    if (c.nullable || c.generated || (row[c.name] ?? null) !== null) continue;
    if (c.name in named)
      reject(
        GrpcCode.FAILED_PRECONDITION,
        `Cannot specify a null value for column: ${table.name}.${c.name} in table: ${table.name}`,
      );
    reject(
      GrpcCode.FAILED_PRECONDITION,
      `A new row in table ${table.name} does not specify a non-null value for NOT NULL column: ${c.name}`,
    );
  }
}
