/**
 * Multi-version storage in SQLite. Every user table T has one physical table holding every version of
 * every row: the user's columns plus `_sk` (the encoded primary key), `_sts` (commit timestamp in ns),
 * `_sdel` (1 for a deletion) and `_stx` (the id of the uncommitted transaction that wrote it, else NULL).
 * A query sees a table through a CTE of the same name that picks, per key, the newest committed version at
 * the snapshot timestamp, overlaid by the reading transaction's own uncommitted writes.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { WireValue } from './hooks';
import type { Column, Table } from './schema';
import { type StoredValue, storedToWire } from './values';

/** A row by column name, in stored form. */
export type Row = Record<string, StoredValue>;

/** What a read sees: committed data as of `snapNs`, plus the uncommitted writes of `txn`. */
export interface ReadView {
  snapNs: bigint;
  txn?: string;
  /** Restricts the view to keys in [lo, hi) (encoded keys), for partitions. */
  range?: { lo?: string; hi?: string; table: string };
}

/** Quotes an identifier for SQLite. */
export function qi(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** SQLite string literal. */
export function ql(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** Name of the physical table of a user table. */
export function physical(table: string): string {
  return qi(`v$${table.toLowerCase()}`);
}

/** Encodes a row's primary key (wire form, as JSON) — equal keys give equal text. */
export function encodeKey(table: Table, row: Row): string {
  const parts: WireValue[] = table.primaryKey.map((k) => {
    const col = table.columns.find((c) => c.name === k.name) as Column;
    return storedToWire(row[k.name] ?? null, col.ct.type);
  });
  return JSON.stringify(parts);
}

/** The multi-version store of one database. */
export class Storage {
  constructor(readonly db: BetterSqlite3.Database) {}

  /** Creates the physical table of a new user table. */
  create(table: Table): void {
    const cols = table.columns.map((c) => qi(c.name)).join(', ');
    const p = physical(table.name);
    this.db.exec(
      `CREATE TABLE ${p} (${cols}, _sk TEXT NOT NULL, _sts INTEGER, _sdel INTEGER NOT NULL, _stx TEXT)`,
    );
    this.db.exec(`CREATE INDEX ${qi(`i$${table.name.toLowerCase()}`)} ON ${p} (_sk, _sts)`);
    this.db.exec(`CREATE INDEX ${qi(`t$${table.name.toLowerCase()}`)} ON ${p} (_stx)`);
  }

  /** Drops a user table's data. */
  drop(table: string): void {
    this.db.exec(`DROP TABLE ${physical(table)}`);
  }

  /** Adds a column (old versions read it as NULL). */
  addColumn(table: string, column: string): void {
    this.db.exec(`ALTER TABLE ${physical(table)} ADD COLUMN ${qi(column)}`);
  }

  /** Drops a column from every version. */
  dropColumn(table: string, column: string): void {
    this.db.exec(`ALTER TABLE ${physical(table)} DROP COLUMN ${qi(column)}`);
  }

  /** SQL of a CTE body that shows `table` as `view` sees it. */
  viewSql(table: Table, view: ReadView): string {
    const p = physical(table.name);
    const cols = table.columns.map((c) => `v.${qi(c.name)}`).join(', ');
    const snap = view.snapNs.toString();
    const own = view.txn ? `v._stx = ${ql(view.txn)}` : '0';
    const notOverlaid = view.txn
      ? ` AND NOT EXISTS (SELECT 1 FROM ${p} o WHERE o._sk = v._sk AND o._stx = ${ql(view.txn)})`
      : '';
    const newest = `v._sts = (SELECT MAX(w._sts) FROM ${p} w WHERE w._sk = v._sk AND w._stx IS NULL AND w._sts <= ${snap})`;
    let where = `v._sdel = 0 AND (${own} OR (v._stx IS NULL AND ${newest}${notOverlaid}))`;
    if (view.range && view.range.table.toLowerCase() === table.name.toLowerCase()) {
      if (view.range.lo !== undefined) where += ` AND v._sk >= ${ql(view.range.lo)}`;
      if (view.range.hi !== undefined) where += ` AND v._sk < ${ql(view.range.hi)}`;
    }
    return `SELECT ${cols} FROM ${p} v WHERE ${where}`;
  }

  /** The row with encoded key `key` as `view` sees it, or undefined. */
  readRow(table: Table, key: string, view: ReadView): Row | undefined {
    const sql = `SELECT * FROM (${this.viewSql(table, view)}) WHERE 1`;
    const p = physical(table.name);
    const scoped = sql.replace(`FROM ${p} v WHERE`, `FROM ${p} v WHERE v._sk = ${ql(key)} AND`);
    // Safe integers: a row read back (e.g. to merge a partial update) must keep INT64 values above 2^53.
    return this.db.prepare(scoped).safeIntegers(true).get() as Row | undefined;
  }

  /** Every visible encoded key of a table in `view`, sorted (for splitting into partitions). */
  keys(table: Table, view: ReadView): string[] {
    const sql = this.viewSql(table, view).replace(/^SELECT .*? FROM /, 'SELECT v._sk AS k FROM ');
    return (this.db.prepare(`${sql} ORDER BY k`).all() as Array<{ k: string }>).map((r) => r.k);
  }

  /** Records an uncommitted write (a row, or null for a deletion) of transaction `txn`. */
  writePending(table: Table, txn: string, key: string, row: Row | null): void {
    const p = physical(table.name);
    this.db.prepare(`DELETE FROM ${p} WHERE _stx = ? AND _sk = ?`).run(txn, key);
    const names = table.columns.map((c) => c.name);
    const cols = [...names.map(qi), '_sk', '_sts', '_sdel', '_stx'].join(', ');
    const marks = [...names.map(() => '?'), '?', 'NULL', '?', '?'].join(', ');
    const values = names.map((n) => (row ? (row[n] ?? null) : null));
    this.db.prepare(`INSERT INTO ${p} (${cols}) VALUES (${marks})`).run(...values, key, row ? 0 : 1, txn);
  }

  /** Encoded keys `txn` wrote in a table, with whether each is a deletion. */
  pending(table: Table, txn: string): Array<{ key: string; row: Row | null }> {
    const rows = this.db
      .prepare(`SELECT * FROM ${physical(table.name)} WHERE _stx = ? ORDER BY rowid`)
      .safeIntegers(true)
      .all(txn) as Row[];
    return rows.map((r) => ({ key: String(r._sk), row: r._sdel === 1n || r._sdel === 1 ? null : r }));
  }

  /** True when a committed version of the key is newer than `snapNs` (a write-write conflict). */
  changedSince(table: Table, key: string, snapNs: bigint): boolean {
    const sql = `SELECT 1 FROM ${physical(table.name)} WHERE _sk = ? AND _stx IS NULL AND _sts > ? LIMIT 1`;
    return this.db.prepare(sql).get(key, snapNs) !== undefined;
  }

  /** Makes `txn`'s writes in a table committed at `tsNs`. */
  commit(table: Table, txn: string, tsNs: bigint): void {
    this.db.prepare(`UPDATE ${physical(table.name)} SET _sts = ?, _stx = NULL WHERE _stx = ?`).run(tsNs, txn);
  }

  /** Discards `txn`'s writes in a table. */
  discard(table: Table, txn: string): void {
    this.db.prepare(`DELETE FROM ${physical(table.name)} WHERE _stx = ?`).run(txn);
  }

  /** Replaces the commit-timestamp placeholder in `txn`'s pending writes of a column. */
  fillCommitTimestamp(table: Table, column: string, txn: string, placeholder: string, text: string): void {
    const sql = `UPDATE ${physical(table.name)} SET ${qi(column)} = ? WHERE _stx = ? AND ${qi(column)} = ?`;
    this.db.prepare(sql).run(text, txn, placeholder);
  }
}
