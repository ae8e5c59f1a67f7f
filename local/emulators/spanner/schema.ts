/**
 * The schema of one database: tables, columns, keys, secondary indexes and database options, with the
 * `SchemaView` the change-stream engine reads. Names are matched case-insensitively, as Spanner does.
 */
import { Code, type SchemaView, SpannerError, type TableInfo } from './hooks';
import type { ProtoBundle } from './proto-bundle';
import type { Dialect, Token } from './tokenizer';
import { type ColumnType, spannerTypeName } from './types';

/** How a generated column is computed: `AS (expression) [STORED]` / `GENERATED ALWAYS AS (…) STORED`. */
export interface Generation {
  /** The expression as written between the parentheses. */
  expression: string;
  stored: boolean;
}

/** One column of a table. */
export interface Column {
  name: string;
  ct: ColumnType;
  nullable: boolean;
  /**
   * The column's name in the physical table, when it is not `name`: a type change writes a new physical
   * column and a column added again after a drop gets a fresh one, so reads at earlier timestamps keep
   * seeing the values (and types) of their own schema version.
   */
  physical?: string;
  generated?: Generation;
  /** HIDDEN: left out of `SELECT *` (TOKENLIST columns of full-text search are hidden). */
  hidden?: boolean;
}

/** One key part of a primary key or index. */
export interface KeyPart {
  name: string;
  desc: boolean;
}

/** A FOREIGN KEY of a table (the referencing side); NO ACTION on delete. */
export interface ForeignKey {
  name: string;
  columns: string[];
  referencedTable: string;
  referencedColumns: string[];
  /** `NOT ENFORCED` (informational) keys are never checked. */
  enforced: boolean;
}

/** A CHECK constraint: its expression as tokens of the table's dialect (translated when evaluated). */
export interface CheckConstraint {
  name: string;
  expression: Token[];
}

/** One user table. */
export interface Table {
  name: string;
  columns: Column[];
  primaryKey: KeyPart[];
  parent?: string;
  onDeleteCascade?: boolean;
  foreignKeys?: ForeignKey[];
  checks?: CheckConstraint[];
  /** The physical table, when it is not `v$<name>` (a table created again after a drop gets a fresh one). */
  physical?: string;
}

/** One secondary index. */
export interface Index {
  name: string;
  table: string;
  unique: boolean;
  nullFiltered: boolean;
  keys: KeyPart[];
  storing: string[];
  interleaveIn?: string;
}

/** Schema versions kept for reads at earlier timestamps (far more than one version retention needs). */
const MAX_VERSIONS = 10_000;

/** The physical column of a column (see {@link Column.physical}). */
export function physicalColumn(c: Column): string {
  return c.physical ?? c.name;
}

/** Mutable schema of one database, with its earlier versions. */
export class Schema implements SchemaView {
  readonly tablesByName = new Map<string, Table>();
  readonly indexesByName = new Map<string, Index>();
  /** Named schemas (`CREATE SCHEMA`): lower-case name → name as created. */
  readonly namedSchemas = new Map<string, string>();
  /** Explicitly set database options (e.g. version_retention_period). */
  readonly options = new Map<string, string>();
  /** The proto bundle (CREATE PROTO BUNDLE), immutable: each change replaces it. */
  protoBundle?: ProtoBundle;
  /** Bumped on every change, so derived state (INFORMATION_SCHEMA) knows when to refresh. */
  version = 0;
  /** Earlier versions, oldest first: each a copy of the schema as it stood from `fromNs` on. */
  private readonly history: Array<{ fromNs: bigint; schema: Schema }> = [];
  /** Since when the live schema stands (the commit timestamp of the last DDL statement). */
  private liveFromNs = 0n;

  constructor(readonly dialect: Dialect) {}

  /** A copy that later DDL does not change (tables, columns, indexes and options). */
  copy(): Schema {
    const out = new Schema(this.dialect);
    for (const [k, t] of this.tablesByName)
      out.tablesByName.set(k, {
        ...t,
        columns: t.columns.map((c) => ({ ...c, ct: { ...c.ct } })),
        primaryKey: t.primaryKey.map((p) => ({ ...p })),
      });
    for (const [k, i] of this.indexesByName)
      out.indexesByName.set(k, { ...i, keys: i.keys.map((p) => ({ ...p })), storing: [...i.storing] });
    for (const [k, v] of this.options) out.options.set(k, v);
    for (const [k, v] of this.namedSchemas) out.namedSchemas.set(k, v);
    out.protoBundle = this.protoBundle;
    out.version = this.version;
    return out;
  }

  /**
   * Records that a DDL statement took effect at `ns`; `before` is a copy taken before it was applied. Reads
   * at earlier timestamps keep using `before`, as the service reads at a timestamp with the schema of that
   * timestamp.
   */
  advance(before: Schema, ns: bigint): void {
    this.history.push({ fromNs: this.liveFromNs, schema: before });
    this.liveFromNs = ns;
    this.version++;
    if (this.history.length > MAX_VERSIONS) this.history.shift();
  }

  /** The schema as it stood at `ns` (this one from the last DDL statement on). */
  at(ns: bigint): Schema {
    if (ns >= this.liveFromNs) return this;
    for (let i = this.history.length - 1; i >= 0; i--) {
      const v = this.history[i] as { fromNs: bigint; schema: Schema };
      if (v.fromNs <= ns) return v.schema;
    }
    return this.history[0]?.schema ?? this;
  }

  /** The table, or undefined. */
  find(name: string): Table | undefined {
    return this.tablesByName.get(name.toLowerCase());
  }

  /** The table, or NOT_FOUND as Spanner answers. */
  get(name: string): Table {
    const t = this.find(name);
    if (!t) throw new SpannerError(Code.NOT_FOUND, `Table not found: ${name}`);
    return t;
  }

  /** The column of a table, or NOT_FOUND as Spanner answers. */
  column(table: Table, name: string): Column {
    const c = table.columns.find((x) => x.name.toLowerCase() === name.toLowerCase());
    if (!c) throw new SpannerError(Code.NOT_FOUND, `Column not found in table ${table.name}: ${name}`);
    return c;
  }

  /** Foreign keys whose referenced table is `table` (for deletes and key changes there). */
  referencingKeys(table: string): Array<{ table: Table; fk: ForeignKey }> {
    const out: Array<{ table: Table; fk: ForeignKey }> = [];
    for (const t of this.tablesByName.values())
      for (const fk of t.foreignKeys ?? [])
        if (fk.referencedTable.toLowerCase() === table.toLowerCase()) out.push({ table: t, fk });
    return out;
  }

  /** Indexes on a table. */
  indexesOf(table: string): Index[] {
    return [...this.indexesByName.values()].filter((i) => i.table.toLowerCase() === table.toLowerCase());
  }

  /** SchemaView: one table in the shape the change-stream engine uses. */
  table(name: string): TableInfo | undefined {
    const t = this.find(name);
    return t ? toInfo(t) : undefined;
  }

  /** SchemaView: every table, in creation order. */
  tables(): TableInfo[] {
    return [...this.tablesByName.values()].map(toInfo);
  }

  /** A snapshot of the current state that later DDL does not change (for commit events). */
  freeze(): SchemaView {
    const tables = this.tables();
    return {
      dialect: this.dialect,
      table: (name) => tables.find((t) => t.name.toLowerCase() === name.toLowerCase()),
      tables: () => tables,
    };
  }

  /** GetDatabaseDdl: the schema printed back as DDL statements. */
  ddl(): string[] {
    const tables = [...this.tablesByName.values()].map((t) => printTable(t, this.dialect));
    const indexes = [...this.indexesByName.values()].map((i) => printIndex(i, this.dialect));
    const schemas = [...this.namedSchemas.values()].map((n) => `CREATE SCHEMA ${q(n, this.dialect)}`);
    const types = [...(this.protoBundle?.types.keys() ?? [])];
    const bundle = types.length ? [`CREATE PROTO BUNDLE (\n${types.map((t) => `  ${t},\n`).join('')})`] : [];
    // The service prints the bundle before the schema objects whose columns may use its types.
    return [...bundle, ...schemas, ...tables, ...indexes];
  }
}

function toInfo(t: Table): TableInfo {
  const keys = new Set(t.primaryKey.map((k) => k.name));
  return {
    name: t.name,
    primaryKey: t.primaryKey.map((k) => k.name),
    columns: t.columns.map((c, i) => ({
      name: c.name,
      type: c.ct.type,
      ordinalPosition: i + 1,
      isPrimaryKey: keys.has(c.name),
      nullable: c.nullable,
      ...(c.generated ? { generated: true } : {}),
    })),
  };
}

/** A name as DDL writes it: each part of a named-schema name quoted on its own where PostgreSQL needs it. */
function q(name: string, dialect: Dialect): string {
  if (dialect !== 'POSTGRESQL') return name;
  return name
    .split('.')
    .map((part) => (/^[a-z_][a-z0-9_]*$/.test(part) ? part : `"${part}"`))
    .join('.');
}

function generation(c: Column, d: Dialect): string {
  if (!c.generated) return '';
  const { expression, stored } = c.generated;
  if (d === 'POSTGRESQL') return ` GENERATED ALWAYS AS (${expression}) ${stored ? 'STORED' : 'VIRTUAL'}`;
  return ` AS (${expression})${stored ? ' STORED' : ''}`;
}

function printTable(t: Table, d: Dialect): string {
  const cols = t.columns.map((c) => {
    const opts =
      c.ct.allowCommitTimestamp && d !== 'POSTGRESQL' ? ' OPTIONS (allow_commit_timestamp = true)' : '';
    return `  ${q(c.name, d)} ${spannerTypeName(c.ct, d, true)}${c.nullable ? '' : ' NOT NULL'}${generation(c, d)}${c.hidden ? ' HIDDEN' : ''}${opts}`;
  });
  cols.push(...constraintLines(t, d));
  const pk = t.primaryKey.map((k) => `${q(k.name, d)}${k.desc ? ' DESC' : ''}`).join(', ');
  const parent = t.parent
    ? `${d === 'POSTGRESQL' ? ' ' : ',\n  '}INTERLEAVE IN PARENT ${q(t.parent, d)} ON DELETE ${t.onDeleteCascade ? 'CASCADE' : 'NO ACTION'}`
    : '';
  if (d === 'POSTGRESQL')
    return `CREATE TABLE ${q(t.name, d)} (\n${cols.join(',\n')},\n  PRIMARY KEY(${pk})\n)${parent}`;
  return `CREATE TABLE ${t.name} (\n${cols.join(',\n')},\n) PRIMARY KEY(${pk})${parent}`;
}

/** Token text as it was written (strings re-quoted). */
export function tokensText(tokens: Token[]): string {
  return tokens.map((t) => (t.kind === 'string' ? `'${t.value.replace(/'/g, "\\'")}'` : t.value)).join(' ');
}

function constraintLines(t: Table, d: Dialect): string[] {
  const list = (names: string[]) => names.map((n) => q(n, d)).join(', ');
  const fks = (t.foreignKeys ?? []).map(
    (fk) =>
      `  CONSTRAINT ${q(fk.name, d)} FOREIGN KEY (${list(fk.columns)}) REFERENCES ${q(fk.referencedTable, d)} (${list(fk.referencedColumns)})${fk.enforced ? '' : ' NOT ENFORCED'}`,
  );
  const checks = (t.checks ?? []).map(
    (c) => `  CONSTRAINT ${q(c.name, d)} CHECK (${tokensText(c.expression)})`,
  );
  return [...fks, ...checks];
}

function printIndex(i: Index, d: Dialect): string {
  const keys = i.keys.map((k) => `${q(k.name, d)}${k.desc ? ' DESC' : ''}`).join(', ');
  const storing = i.storing.length
    ? ` ${d === 'POSTGRESQL' ? 'INCLUDE' : 'STORING'} (${i.storing.map((s) => q(s, d)).join(', ')})`
    : '';
  const kind = `${i.unique ? 'UNIQUE ' : ''}${i.nullFiltered && d !== 'POSTGRESQL' ? 'NULL_FILTERED ' : ''}`;
  return `CREATE ${kind}INDEX ${q(i.name, d)} ON ${q(i.table, d)}(${keys})${storing}`;
}
