/**
 * Multi-version storage in SQLite. Every user table T has one physical table holding every version of
 * every row: the user's columns plus `_sk` (the encoded primary key), `_sts` (commit timestamp in ns),
 * `_sdel` (1 for a deletion) and `_stx` (the id of the uncommitted transaction that wrote it, else NULL).
 * A query sees a table through a CTE of the same name that picks, per key, the newest committed version at
 * the snapshot timestamp, overlaid by the reading transaction's own uncommitted writes.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { WireValue } from './hooks';
import { type Column, physicalColumn, type Table } from './schema';
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

/** Default name of the physical table of a user table (unquoted). */
export function physicalName(table: string): string {
  return `v$${table.toLowerCase()}`;
}

/** The physical table of a user table, quoted. */
export function physical(table: Table): string {
  return qi(table.physical ?? physicalName(table.name));
}

/**
 * Encodes a row's primary key (wire form, as JSON) — equal keys give equal text. A FLOAT key of ±Infinity or
 * NaN is spelled as its wire text: JSON would write each of them as `null`, merging the three rows.
 */
export function encodeKey(table: Table, row: Row): string {
  const parts: WireValue[] = table.primaryKey.map((k) => {
    const col = table.columns.find((c) => c.name === k.name) as Column;
    return storedToWire(row[k.name] ?? null, col.ct.type);
  });
  return JSON.stringify(parts, (_k, v: unknown) =>
    typeof v === 'number' && !Number.isFinite(v) ? String(v) : v,
  );
}

/** The multi-version store of one database. */
export class Storage {
  private readonly statements = new Map<string, BetterSqlite3.Statement>();

  constructor(readonly db: BetterSqlite3.Database) {}

  /**
   * A prepared statement, reused: preparing dominated the cost of a write. Safe integers, because an INT64 read
   * back as a JS number loses digits above 2^53, and rows read here feed change records and partial writes.
   */
  private statement(sql: string): BetterSqlite3.Statement {
    let st = this.statements.get(sql);
    if (!st) {
      st = this.db.prepare(sql).safeIntegers(true);
      if (this.statements.size > 500) this.statements.clear();
      this.statements.set(sql, st);
    }
    return st;
  }

  /**
   * Creates the physical table of a new user table. A table dropped earlier keeps its physical table (reads
   * at timestamps before the drop still see it), so a table created again under its name gets a fresh one.
   */
  create(table: Table): void {
    let name = physicalName(table.name);
    for (let n = 1; this.exists(name); n++) name = `${physicalName(table.name)}~${n}`;
    if (name !== physicalName(table.name)) table.physical = name;
    const cols = table.columns.map((c) => qi(physicalColumn(c))).join(', ');
    const p = qi(name);
    this.db.exec(
      `CREATE TABLE ${p} (${cols}, _sk TEXT NOT NULL, _sts INTEGER, _sdel INTEGER NOT NULL, _stx TEXT)`,
    );
    this.db.exec(`CREATE INDEX ${qi(`i$${name}`)} ON ${p} (_sk, _sts)`);
    // (_stx, _sk): a transaction rewriting one of its own pending keys must not scan all its other writes.
    this.db.exec(`CREATE INDEX ${qi(`t$${name}`)} ON ${p} (_stx, _sk)`);
  }

  private exists(name: string): boolean {
    return (
      this.db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined
    );
  }

  private columnNames(table: Table): Set<string> {
    const rows = this.db
      .prepare(`SELECT name FROM pragma_table_info(?)`)
      .all(table.physical ?? physicalName(table.name));
    return new Set((rows as Array<{ name: string }>).map((r) => r.name.toLowerCase()));
  }

  /**
   * Adds a physical column for `column` (old versions read it as NULL) and sets `column.physical` when its
   * name is taken by a column of an earlier schema version (dropped, or replaced by a type change).
   */
  addColumn(table: Table, column: Column): void {
    const taken = this.columnNames(table);
    let name = column.name;
    for (let n = 1; taken.has(name.toLowerCase()); n++) name = `${column.name}~${n}`;
    if (name !== column.name) column.physical = name;
    else delete column.physical;
    this.db.exec(`ALTER TABLE ${physical(table)} ADD COLUMN ${qi(name)}`);
  }

  /** Copies every version of a column into another physical column, converting each stored value. */
  copyColumn(table: Table, from: Column, to: Column, convert: (v: StoredValue) => StoredValue): void {
    const p = physical(table);
    const src = qi(physicalColumn(from));
    const rows = this.db
      .prepare(`SELECT rowid AS r, ${src} AS v FROM ${p}`)
      .safeIntegers(true)
      .all() as Array<{
      r: bigint;
      v: StoredValue;
    }>;
    const update = this.db.prepare(`UPDATE ${p} SET ${qi(physicalColumn(to))} = ? WHERE rowid = ?`);
    for (const { r, v } of rows) update.run(convert(v), r);
  }

  /** Every stored version of every row (committed or not), with its rowid, columns under their names. */
  versions(table: Table): Array<{ rowid: bigint; row: Row }> {
    const cols = table.columns.map((c) => `${qi(physicalColumn(c))} AS ${qi(c.name)}`);
    const sql = `SELECT rowid AS _rowid, ${cols.join(', ')} FROM ${physical(table)} WHERE _sdel = 0`;
    const rows = this.db.prepare(sql).safeIntegers(true).all() as Array<Row & { _rowid: bigint }>;
    return rows.map(({ _rowid, ...row }) => ({ rowid: _rowid, row }));
  }

  /** Overwrites one column of one stored version. */
  setValue(table: Table, rowid: bigint, column: Column, value: StoredValue): void {
    const sql = `UPDATE ${physical(table)} SET ${qi(physicalColumn(column))} = ? WHERE rowid = ?`;
    this.db.prepare(sql).run(value, rowid);
  }

  /** Every stored value of a column in the newest committed version of each live row (for DDL checks). */
  currentValues(table: Table, column: Column, snapNs: bigint): Array<{ key: string; value: StoredValue }> {
    const sql = `SELECT _sk AS k, ${qi(column.name)} AS v FROM (${this.viewSql(table, { snapNs }, true)})`;
    const rows = this.db.prepare(sql).safeIntegers(true).all() as Array<{ k: string; v: StoredValue }>;
    return rows.map((r) => ({ key: r.k, value: r.v }));
  }

  /**
   * SQL of a CTE body that shows `table` as `view` sees it: its columns under their names (hidden ones only
   * when `all`), plus `_sk` when `withKey`.
   */
  viewSql(table: Table, view: ReadView, withKey = false, all = true): string {
    const p = physical(table);
    const cols = table.columns
      .filter((c) => all || !c.hidden)
      .map((c) => `v.${qi(physicalColumn(c))} AS ${qi(c.name)}`);
    if (withKey) cols.push('v._sk AS _sk');
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
    return `SELECT ${cols.join(', ')} FROM ${p} v WHERE ${where}`;
  }

  /** The row with encoded key `key` as `view` sees it, or undefined. */
  readRow(table: Table, key: string, view: ReadView): Row | undefined {
    const p = physical(table);
    const cols = table.columns.map((c) => `${qi(physicalColumn(c))} AS ${qi(c.name)}`).join(', ');
    // Statements are reused (preparing dominated a write's cost) and read safe integers (`statement`): this
    // row feeds both the commit's change records and the base of every partial write of the key.
    const visible = (row: (Row & { _sdel?: StoredValue }) | undefined): Row | undefined => {
      if (!row) return undefined;
      const { _sdel, ...values } = row;
      return _sdel === 1n ? undefined : values;
    };
    if (view.txn) {
      const own = this.statement(`SELECT ${cols}, _sdel FROM ${p} WHERE _stx = ? AND _sk = ?`).get(
        view.txn,
        key,
      ) as (Row & { _sdel?: StoredValue }) | undefined;
      if (own) return visible(own);
    }
    const sql = `SELECT ${cols}, _sdel FROM ${p} WHERE _sk = ? AND _stx IS NULL AND _sts <= ? ORDER BY _sts DESC LIMIT 1`;
    return visible(this.statement(sql).get(key, view.snapNs) as (Row & { _sdel?: StoredValue }) | undefined);
  }

  /** Every visible encoded key of a table in `view`, sorted (for splitting into partitions). */
  keys(table: Table, view: ReadView): string[] {
    const sql = this.viewSql(table, view).replace(/^SELECT .*? FROM /, 'SELECT v._sk AS k FROM ');
    return (this.db.prepare(`${sql} ORDER BY k`).all() as Array<{ k: string }>).map((r) => r.k);
  }

  /** Records an uncommitted write (a row, or null for a deletion) of transaction `txn`. */
  writePending(table: Table, txn: string, key: string, row: Row | null): void {
    const p = physical(table);
    this.statement(`DELETE FROM ${p} WHERE _stx = ? AND _sk = ?`).run(txn, key);
    const names = table.columns.map((c) => qi(physicalColumn(c)));
    const cols = [...names, '_sk', '_sts', '_sdel', '_stx'].join(', ');
    const marks = [...names.map(() => '?'), '?', 'NULL', '?', '?'].join(', ');
    const values = table.columns.map((c) => (row ? (row[c.name] ?? null) : null));
    this.statement(`INSERT INTO ${p} (${cols}) VALUES (${marks})`).run(...values, key, row ? 0 : 1, txn);
  }

  /** Encoded keys `txn` wrote in a table, with whether each is a deletion (rows by column name). */
  pending(table: Table, txn: string): Array<{ key: string; row: Row | null }> {
    const cols = table.columns.map((c) => `${qi(physicalColumn(c))} AS ${qi(c.name)}`);
    const sql = `SELECT ${[...cols, '_sk', '_sdel'].join(', ')} FROM ${physical(table)} WHERE _stx = ? ORDER BY rowid`;
    const rows = this.db.prepare(sql).safeIntegers(true).all(txn) as Row[];
    return rows.map(({ _sk, _sdel, ...r }) => ({
      key: String(_sk),
      row: _sdel === 1n || _sdel === 1 ? null : r,
    }));
  }

  /** True when a committed version of the key is newer than `snapNs` (a write-write conflict). */
  changedSince(table: Table, key: string, snapNs: bigint): boolean {
    const sql = `SELECT 1 FROM ${physical(table)} WHERE _sk = ? AND _stx IS NULL AND _sts > ? LIMIT 1`;
    return this.statement(sql).get(key, snapNs) !== undefined;
  }

  /** Makes `txn`'s writes in a table committed at `tsNs`. */
  commit(table: Table, txn: string, tsNs: bigint): void {
    this.statement(`UPDATE ${physical(table)} SET _sts = ?, _stx = NULL WHERE _stx = ?`).run(tsNs, txn);
  }

  /** Discards `txn`'s writes in a table. */
  discard(table: Table, txn: string): void {
    this.db.prepare(`DELETE FROM ${physical(table)} WHERE _stx = ?`).run(txn);
  }

  /** Replaces the commit-timestamp placeholder in `txn`'s pending writes of a column. */
  fillCommitTimestamp(table: Table, column: Column, txn: string, placeholder: string, text: string): void {
    const c = qi(physicalColumn(column));
    const sql = `UPDATE ${physical(table)} SET ${c} = ? WHERE _stx = ? AND ${c} = ?`;
    this.db.prepare(sql).run(text, txn, placeholder);
  }
}
