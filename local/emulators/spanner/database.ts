/**
 * One emulated database: schema, multi-version storage, INFORMATION_SCHEMA, transactions and the commit
 * path. Commits run synchronously, so each one is a critical section: the change-stream hook sees commits
 * one at a time, in commit-timestamp order.
 */
import { randomBytes } from 'node:crypto';
import Sqlite from 'better-sqlite3';
import { type Clock, parseRetention } from './clock';
import { verifyConstraints, type WrittenRow } from './constraints';
import { applyDdl } from './ddl-apply';
import { type DdlAction, parseDdl } from './ddl-parse';
import { Generator } from './generated';
import {
  type ChangeStreamHooks,
  Code,
  type RowChange,
  type SchemaChange,
  SpannerError,
  type WireValue,
} from './hooks';
import { InformationSchema } from './info-schema';
import { checkCommitBytes } from './limits';
import { debugKey, MAX_MUTATIONS_PER_COMMIT, tooManyMutations, uniqueIndexViolation } from './messages';
import { mutationsCount } from './mutation-count';
import type { QueryContext } from './query';
import { Schema, type Table } from './schema';
import { registerSqlRuntime } from './sql';
import { type ReadView, type Row, Storage } from './storage';
import type { Dialect } from './tokenizer';
import { COMMIT_TIMESTAMP_SENTINEL, nanosToText, storedToWire } from './values';
import { type MutationJson, Writer, type WriteTxn } from './writes';

/** A transaction known to the database. */
export interface Txn extends WriteTxn {
  readOnly: boolean;
  /** A partitioned-DML transaction: each statement commits on its own. */
  partitioned?: boolean;
  state: 'active' | 'committed' | 'rolledBack';
  tag: string;
  commitNs?: bigint;
  /** `exclude_txn_from_change_streams` of a read-write transaction. */
  excludeFromChangeStreams?: boolean;
}

const MAX_NS = 9_000_000_000_000_000_000n;

/** One row a committed transaction wrote (null for a deletion), with the non-key columns it named. */
export interface JournaledWrite {
  table: string;
  key: string;
  row: Row | null;
  columns: string[];
}

/** A change to one database, as persistence journals it. */
export type DatabaseEvent =
  | { k: 'ddl'; statement: string; ns: bigint; descriptors?: string }
  | { k: 'commit'; ts: bigint; tag: string; writes: JournaledWrite[]; excluded?: boolean };

/** Limits a commit (and a BatchWrite request) must stay within. */
export interface WriteLimits {
  /** Index-aware mutation count (see `mutation-count.ts`); the service allows 80,000. */
  mutationsPerCommit: number;
}

/** An emulated database. */
export class EmulatedDatabase {
  readonly schema: Schema;
  readonly storage: Storage;
  readonly info: InformationSchema;
  readonly ctx: QueryContext;
  readonly createNs: bigint;
  /** Computes generated columns on write and when DDL adds one. */
  readonly generator: Generator;
  private readonly sqlite: Sqlite.Database;
  private readonly txns = new Map<string, Txn>();
  /** Told of every applied DDL statement and commit (persistence). */
  journal?: (event: DatabaseEvent) => void;

  constructor(
    readonly name: string,
    readonly dialect: Dialect,
    readonly clock: Clock,
    readonly hooks?: ChangeStreamHooks,
    /** The service's write limits, shared by the emulator's databases (tests may lower them). */
    readonly limits: WriteLimits = { mutationsPerCommit: MAX_MUTATIONS_PER_COMMIT },
    createNs?: bigint,
  ) {
    this.sqlite = new Sqlite(':memory:');
    this.sqlite.pragma('case_sensitive_like = ON');
    registerFunctions(this.sqlite, clock);
    this.schema = new Schema(dialect);
    this.storage = new Storage(this.sqlite);
    this.generator = new Generator(this.sqlite, this.schema);
    this.info = new InformationSchema(this.sqlite, this.schema, name.split('/').pop() ?? '', hooks);
    this.ctx = { db: this.sqlite, schema: this.schema, storage: this.storage, info: this.info, dialect };
    this.createNs = createNs ?? clock.nowNs();
  }

  /**
   * Runs DDL statements in order; each is offered to the change-stream engine first. Each takes effect at a
   * commit timestamp of its own, and reads at earlier timestamps keep the schema they saw. `atNs` gives each
   * statement's time when a journal is replayed. `protoDescriptors` is the request's serialized
   * FileDescriptorSet, read by CREATE / ALTER PROTO BUNDLE.
   */
  updateDdl(statements: string[], atNs?: bigint[], protoDescriptors?: Uint8Array): void {
    const descriptors = protoDescriptors?.length ? protoDescriptors : undefined;
    if (descriptors && this.dialect === 'POSTGRESQL')
      throw new SpannerError(
        Code.INVALID_ARGUMENT,
        'proto_descriptors are not supported in the PostgreSQL dialect: it has no PROTO or ENUM types',
      );
    for (const [i, s] of statements.entries()) {
      const before = this.schema.copy();
      const replayed = atNs?.[i];
      if (replayed !== undefined) this.clock.observe(replayed);
      const ts = replayed ?? this.clock.nextCommitNs();
      if (!this.hooks?.applyDdl(s, this.schema, ts)) {
        const action = parseDdl(s, this.dialect);
        const change = schemaChangeOf(action);
        if (change) this.hooks?.checkSchemaChange?.(change, this.schema);
        applyDdl(this.schema, this.storage, this.generator, action, descriptors);
      }
      this.schema.advance(before, ts);
      this.journal?.({
        k: 'ddl',
        statement: s,
        ns: ts,
        ...(descriptors ? { descriptors: Buffer.from(descriptors).toString('base64') } : {}),
      });
    }
  }

  /** What a query or read at `view` needs: the schema of its timestamp (read-write: the live one). */
  ctxAt(view: ReadView): QueryContext {
    if (view.txn !== undefined) return this.ctx;
    const schema = this.schema.at(view.snapNs);
    return schema === this.schema ? this.ctx : { ...this.ctx, schema };
  }

  /** GetDatabaseDdl statements. */
  ddl(): string[] {
    return [...this.schema.ddl(), ...(this.hooks?.ddlStatements() ?? [])];
  }

  /** Retention in ns (default 1h). */
  retentionNs(): bigint {
    return parseRetention(this.schema.options.get('version_retention_period') ?? '1h');
  }

  /** Earliest readable timestamp. */
  earliestVersionNs(): bigint {
    const byRetention = this.clock.nowNs() - this.retentionNs();
    if (byRetention < this.createNs) return this.createNs;
    return byRetention;
  }

  /** Checks a read timestamp against version retention, as the service does. */
  checkReadable(ns: bigint): void {
    const earliest = this.earliestVersionNs();
    if (ns < earliest)
      throw new SpannerError(
        Code.FAILED_PRECONDITION,
        `Read timestamp ${nanosToText(ns)} is earlier than the earliest version time of the database ${nanosToText(earliest)}; it is older than the version_retention_period`,
      );
  }

  /** Starts a transaction. */
  begin(readOnly: boolean, snapNs: bigint, tag = '', partitioned = false): Txn {
    const id = randomBytes(12).toString('base64');
    const txn: Txn = { id, snapNs, readOnly, state: 'active', tag, written: new Map(), partitioned };
    this.txns.set(id, txn);
    return txn;
  }

  /** Looks a transaction up by id (base64). */
  txn(id: string): Txn {
    const t = this.txns.get(id);
    if (!t) throw new SpannerError(Code.NOT_FOUND, `Transaction not found: ${id}`);
    if (t.state === 'rolledBack')
      throw new SpannerError(Code.FAILED_PRECONDITION, 'Transaction has been rolled back');
    return t;
  }

  /** A writer for a read-write transaction. */
  writer(txn: Txn): Writer {
    if (txn.readOnly)
      throw new SpannerError(Code.FAILED_PRECONDITION, 'Cannot write in a read-only transaction');
    if (txn.state !== 'active')
      throw new SpannerError(Code.FAILED_PRECONDITION, 'Transaction has already been committed');
    return new Writer(this.schema, this.storage, txn, this.generator);
  }

  /** Rolls a transaction back. */
  rollback(txn: Txn): void {
    if (txn.state === 'committed') return;
    for (const t of this.schema.tablesByName.values()) this.storage.discard(t, txn.id);
    txn.state = 'rolledBack';
  }

  /** Commits: applies mutations, checks conflicts and constraints, stamps, publishes. Returns the ns. */
  commit(txn: Txn, mutations: MutationJson[]): bigint {
    if (txn.state === 'committed' && txn.commitNs !== undefined) return txn.commitNs;
    try {
      const limit = this.limits.mutationsPerCommit;
      if (mutationsCount(this.schema, mutations) > limit) throw tooManyMutations(limit);
      const w = this.writer(txn);
      checkCommitBytes(mutations);
      for (const m of mutations) w.apply(m);
      this.checkConflicts(txn);
      this.checkConstraints(txn);
      this.checkUniqueIndexes(txn);
    } catch (err) {
      this.rollback(txn);
      throw err;
    }
    return this.publish(txn, this.clock.nextCommitNs());
  }

  /** Makes a checked transaction's writes committed at `ts`, tells the change streams and the journal. */
  private publish(txn: Txn, ts: bigint): bigint {
    const changes = this.collectChanges(txn, ts);
    const writes = this.journal ? this.pendingWrites(txn) : [];
    for (const t of this.schema.tablesByName.values()) this.storage.commit(t, txn.id, ts);
    txn.state = 'committed';
    txn.commitNs = ts;
    if (changes.length && this.hooks)
      this.hooks.onCommit({
        commitTimestampNs: ts,
        transactionTag: txn.tag,
        changes,
        schema: this.schema.freeze(),
        ...(txn.excludeFromChangeStreams ? { excludedFromChangeStreams: true } : {}),
      });
    if (writes.length)
      this.journal?.({
        k: 'commit',
        ts,
        tag: txn.tag,
        writes,
        ...(txn.excludeFromChangeStreams ? { excluded: true } : {}),
      });
    return ts;
  }

  /** The rows a transaction is about to commit (commit timestamps filled in), for the journal. */
  private pendingWrites(txn: Txn): JournaledWrite[] {
    const out: JournaledWrite[] = [];
    for (const w of txn.written.values()) {
      const table = this.schema.get(w.table);
      const row = this.storage.readRow(table, w.key, { snapNs: 0n, txn: txn.id });
      const clean = row ? Object.fromEntries(table.columns.map((c) => [c.name, row[c.name] ?? null])) : null;
      out.push({ table: table.name, key: w.key, row: clean, columns: [...w.columns] });
    }
    return out;
  }

  /** Re-applies a journaled commit at its timestamp (no checks: it was checked when it first ran). */
  replayCommit(ts: bigint, tag: string, writes: JournaledWrite[], excluded = false): void {
    const txn = this.begin(false, ts, tag);
    if (excluded) txn.excludeFromChangeStreams = true;
    for (const w of writes) {
      const table = this.schema.get(w.table);
      this.storage.writePending(table, txn.id, w.key, w.row);
      txn.written.set(`${table.name.toLowerCase()}\u0000${w.key}`, {
        table: table.name,
        key: w.key,
        columns: new Set(w.columns),
      });
    }
    this.clock.observe(ts);
    this.publish(txn, ts);
    this.txns.delete(txn.id);
  }

  private checkConflicts(txn: Txn): void {
    for (const w of txn.written.values()) {
      if (this.storage.changedSince(this.schema.get(w.table), w.key, txn.snapNs))
        throw new SpannerError(
          Code.ABORTED,
          'Transaction was aborted because of a conflict with a concurrent transaction.',
        );
    }
  }

  /** FOREIGN KEY and CHECK constraints over every row the transaction wrote (skipped when none exist). */
  private checkConstraints(txn: Txn): void {
    const tables = [...this.schema.tablesByName.values()];
    if (!tables.some((t) => t.checks?.length || t.foreignKeys?.length)) return;
    const rows: WrittenRow[] = [...txn.written.values()].map((w) => {
      const table = this.schema.get(w.table);
      return {
        table,
        before: this.storage.readRow(table, w.key, { snapNs: MAX_NS }),
        after: this.storage.readRow(table, w.key, { snapNs: 0n, txn: txn.id }),
      };
    });
    verifyConstraints(
      { schema: this.schema, storage: this.storage, db: this.sqlite, view: { snapNs: MAX_NS, txn: txn.id } },
      rows,
    );
  }

  private checkUniqueIndexes(txn: Txn): void {
    for (const w of txn.written.values()) {
      const table = this.schema.get(w.table);
      const row = this.storage.readRow(table, w.key, { snapNs: txn.snapNs, txn: txn.id });
      if (!row) continue;
      for (const idx of this.schema.indexesOf(table.name).filter((i) => i.unique)) {
        const values = idx.keys.map((k) => row[k.name] ?? null);
        if (idx.nullFiltered && values.some((v) => v === null)) continue;
        const cond = idx.keys.map((k) => `"${k.name}" IS ?`).join(' AND ');
        const view = this.storage.viewSql(table, { snapNs: MAX_NS, txn: txn.id });
        const n = this.sqlite
          .prepare(`SELECT count(*) AS n FROM (${view}) WHERE ${cond}`)
          .pluck()
          .get(...values);
        if (Number(n) > 1) {
          const cols = idx.keys.map((k) => this.schema.column(table, k.name));
          const wire = cols.map((c, i) => storedToWire(values[i] ?? null, c.ct.type));
          throw uniqueIndexViolation(
            idx.name,
            debugKey(
              wire,
              cols.map((c) => c.ct.type),
            ),
          );
        }
      }
    }
  }

  private wireRow(table: Table, row: Row | undefined | null): Record<string, WireValue> | null {
    if (!row) return null;
    return Object.fromEntries(
      table.columns.map((c) => [c.name, storedToWire(row[c.name] ?? null, c.ct.type)]),
    );
  }

  private collectChanges(txn: Txn, ts: bigint): RowChange[] {
    const text = nanosToText(ts);
    const changes: RowChange[] = [];
    // Once per table and column: each fill updates every pending row of the transaction in that table.
    const tables = new Set([...txn.written.values()].map((w) => w.table));
    for (const table of [...tables].map((t) => this.schema.get(t)))
      for (const c of table.columns.filter((x) => x.ct.allowCommitTimestamp))
        this.storage.fillCommitTimestamp(table, c, txn.id, COMMIT_TIMESTAMP_SENTINEL, text);
    for (const w of txn.written.values()) {
      const table = this.schema.get(w.table);
      const oldRow = this.wireRow(table, this.storage.readRow(table, w.key, { snapNs: MAX_NS }));
      const newRow = this.wireRow(table, this.storage.readRow(table, w.key, { snapNs: 0n, txn: txn.id }));
      if (!oldRow && !newRow) continue;
      const modType = !oldRow ? 'INSERT' : !newRow ? 'DELETE' : 'UPDATE';
      const keyNames = table.primaryKey.map((k) => k.name);
      const keys = Object.fromEntries(keyNames.map((k) => [k, (newRow ?? oldRow)?.[k] ?? null]));
      const nonKey = table.columns.map((c) => c.name).filter((c) => !keyNames.includes(c));
      const writtenColumns = modType === 'UPDATE' ? nonKey.filter((c) => w.columns.has(c)) : nonKey;
      changes.push({ table: table.name, modType, keys, oldRow, newRow, writtenColumns });
    }
    return changes;
  }
}

/** The part of a DDL action the change-stream engine may veto. */
function schemaChangeOf(a: DdlAction): SchemaChange | undefined {
  if (a.kind === 'dropTable') return { kind: 'dropTable', table: a.name };
  if (a.kind === 'dropColumn') return { kind: 'dropColumn', table: a.table, column: a.column };
  return undefined;
}

function registerFunctions(db: Sqlite.Database, clock: Clock): void {
  const opts = { deterministic: false, safeIntegers: true } as const;
  db.function('spanner_now', opts, () => nanosToText(clock.nowNs()));
  db.function('spanner_pending_commit_timestamp', opts, () => COMMIT_TIMESTAMP_SENTINEL);
  db.function('spanner_starts_with', (a: unknown, b: unknown) =>
    a === null || b === null ? null : String(a).startsWith(String(b)) ? 1 : 0,
  );
  db.function('spanner_ends_with', (a: unknown, b: unknown) =>
    a === null || b === null ? null : String(a).endsWith(String(b)) ? 1 : 0,
  );
  registerSqlRuntime(db, () => clock.nowNs());
}
