/**
 * Row writes inside a read-write transaction: the five mutation kinds and the row-level primitives DML uses.
 * Each write lands in the transaction's uncommitted versions, so later reads and DML of the same
 * transaction see it, and is recorded for the commit's change list.
 */
import type { Generator } from './generated';
import { Code, SpannerError, type WireValue } from './hooks';
import { type KeySetJson, keySetMatcher } from './keys';
import { checkCellSizes } from './limits';
import {
  debugKey,
  nonNullValueNotSpecified,
  nullValueForNotNullColumn,
  parentKeyNotFound,
  rowAlreadyExists,
  rowNotFound,
} from './messages';
import type { Schema, Table } from './schema';
import { encodeKey, type ReadView, type Row, type Storage } from './storage';
import { protoToWire, storedToWire, wireToStored } from './values';

/** The transaction state writes need. */
export interface WriteTxn {
  id: string;
  snapNs: bigint;
  /** Per table+key: the non-key columns written, in first-write order. */
  written: Map<string, { table: string; key: string; columns: Set<string> }>;
}

import type { MutationJson, WriteJson } from './mutation-json';

export type { MutationJson } from './mutation-json';

/** The five write kinds. */
export type WriteKind = 'insert' | 'update' | 'insertOrUpdate' | 'replace';

/** Applies writes for one transaction. */
export class Writer {
  constructor(
    private readonly schema: Schema,
    private readonly storage: Storage,
    private readonly txn: WriteTxn,
    private readonly generator?: Generator,
  ) {}

  private view(): ReadView {
    return { snapNs: this.txn.snapNs, txn: this.txn.id };
  }

  /** A key as the official emulator prints it in messages, e.g. `{Int64(1)}`. */
  private keyText(table: Table, row: Row): string {
    const cols = table.primaryKey.map((k) => this.schema.column(table, k.name));
    return debugKey(
      cols.map((c) => storedToWire(row[c.name] ?? null, c.ct.type)),
      cols.map((c) => c.ct.type),
    );
  }

  /** Writes one row of the given kind; `row` holds the named columns only. */
  write(kind: WriteKind, table: Table, row: Row, named: string[]): void {
    const generated = table.columns.find((c) => c.generated && named.includes(c.name));
    if (generated)
      throw new SpannerError(
        Code.FAILED_PRECONDITION,
        `Cannot write into generated column \`${table.name}.${generated.name}\`.`,
      );
    // A generated key column is computed from the named columns before the row can be found by its key.
    if (this.generator && table.primaryKey.some((k) => this.schema.column(table, k.name).generated)) {
      const probe: Row = { ...row };
      this.generator.fill(table, probe);
      for (const k of table.primaryKey) if (!(k.name in row)) row[k.name] = probe[k.name] ?? null;
    }
    for (const k of table.primaryKey)
      if (!(k.name in row)) throw nullValueForNotNullColumn(table.name, k.name);
    checkCellSizes(table, row);
    const key = encodeKey(table, row);
    const existing = this.storage.readRow(table, key, this.view());
    if (kind === 'insert' && existing) throw rowAlreadyExists(table.name, this.keyText(table, row));
    if (kind === 'update' && !existing) throw rowNotFound(table.name, this.keyText(table, row));
    const base: Row = kind === 'replace' || !existing ? {} : existing;
    const full: Row = {};
    for (const c of table.columns)
      full[c.name] = c.name in row ? (row[c.name] ?? null) : (base[c.name] ?? null);
    this.generator?.fill(table, full);
    for (const c of table.columns) {
      if (c.nullable || full[c.name] !== null) continue;
      if (c.name in row) throw nullValueForNotNullColumn(table.name, `${table.name}.${c.name}`);
      throw nonNullValueNotSpecified(table.name, c.name);
    }
    if (table.parent) this.requireParent(table, full);
    const keys = new Set(table.primaryKey.map((k) => k.name));
    const cols =
      kind === 'replace' || (kind !== 'update' && !existing) ? table.columns.map((c) => c.name) : named;
    this.record(
      table,
      key,
      cols.filter((c) => !keys.has(c)),
    );
    this.storage.writePending(table, this.txn.id, key, full);
  }

  private requireParent(table: Table, row: Row): void {
    const parent = this.schema.get(table.parent as string);
    const prow: Row = {};
    for (const k of parent.primaryKey) prow[k.name] = row[k.name] ?? null;
    if (!this.storage.readRow(parent, encodeKey(parent, prow), this.view()))
      throw parentKeyNotFound(parent.name, table.name, this.keyText(parent, prow));
  }

  private record(table: Table, key: string, columns: string[]): void {
    const id = `${table.name.toLowerCase()}\u0000${key}`;
    const entry = this.txn.written.get(id) ?? { table: table.name, key, columns: new Set<string>() };
    for (const c of columns) entry.columns.add(c);
    this.txn.written.set(id, entry);
  }

  /** Deletes one row by encoded key (no error when missing), cascading to interleaved children. */
  deleteKey(table: Table, key: string): void {
    const existing = this.storage.readRow(table, key, this.view());
    if (!existing) return;
    const prefix = `${key.slice(0, -1)},`;
    for (const child of this.schema.tablesByName.values()) {
      if (child.parent?.toLowerCase() !== table.name.toLowerCase()) continue;
      const keys = this.storage.keys(child, this.view()).filter((k) => k.startsWith(prefix));
      if (keys.length && !child.onDeleteCascade)
        throw new SpannerError(
          Code.FAILED_PRECONDITION,
          `Delete failed because one or more child rows exist in interleaved table ${child.name}`,
        );
      for (const k of keys) this.deleteKey(child, k);
    }
    this.record(table, key, []);
    this.storage.writePending(table, this.txn.id, key, null);
  }

  /** Deletes every row in a key set. */
  deleteKeySet(table: Table, ks: KeySetJson): void {
    const match = keySetMatcher(table, table.primaryKey, ks);
    for (const key of this.storage.keys(table, this.view()))
      if (match(JSON.parse(key) as WireValue[])) this.deleteKey(table, key);
  }

  /** Applies one mutation. */
  apply(m: MutationJson): void {
    if (m.delete) {
      this.deleteKeySet(this.schema.get(m.delete.table), m.delete.keySet ?? {});
      return;
    }
    const kind = (['insert', 'update', 'insertOrUpdate', 'replace'] as const).find((k) => m[k]);
    if (!kind) throw new SpannerError(Code.INVALID_ARGUMENT, 'Mutation has no operation');
    const w = m[kind] as WriteJson;
    const table = this.schema.get(w.table);
    const columns = (w.columns ?? []).map((c) => this.schema.column(table, c));
    for (const list of w.values ?? []) {
      const values = list.values ?? [];
      if (values.length !== columns.length)
        throw new SpannerError(
          Code.INVALID_ARGUMENT,
          `Mutation for table ${table.name} has the wrong number of values`,
        );
      const row: Row = {};
      columns.forEach((c, i) => {
        row[c.name] = wireToStored(protoToWire(values[i]), c.ct.type);
      });
      this.write(
        kind,
        table,
        row,
        columns.map((c) => c.name),
      );
    }
  }
}
