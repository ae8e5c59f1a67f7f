/**
 * INFORMATION_SCHEMA views, kept as real tables in an attached SQLite database named `information_schema`
 * and refilled whenever the schema changes, so queries can join and filter them like user tables.
 * GoogleSQL names are upper case, PostgreSQL names lower case, as in each dialect's INFORMATION_SCHEMA.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { ChangeStreamHooks, SpannerTypeJson, WireValue } from './hooks';
import { splitName } from './names';
import type { Schema } from './schema';
import { qi } from './storage';
import { pgDataType, spannerTypeName } from './types';
import { type StoredValue, wireToStored } from './values';

type Kind = 'S' | 'I' | 'B';
const CS = 'CHANGE_STREAM_CATALOG:S CHANGE_STREAM_SCHEMA:S CHANGE_STREAM_NAME:S';
const T = 'TABLE_CATALOG:S TABLE_SCHEMA:S TABLE_NAME:S';
const VIEWS: Record<string, string> = {
  SCHEMATA: 'CATALOG_NAME:S SCHEMA_NAME:S EFFECTIVE_TIMESTAMP:I',
  TABLES: `${T} TABLE_TYPE:S PARENT_TABLE_NAME:S ON_DELETE_ACTION:S SPANNER_STATE:S INTERLEAVE_TYPE:S ROW_DELETION_POLICY_EXPRESSION:S`,
  COLUMNS: `${T} COLUMN_NAME:S ORDINAL_POSITION:I COLUMN_DEFAULT:S DATA_TYPE:S IS_NULLABLE:S SPANNER_TYPE:S IS_GENERATED:S GENERATION_EXPRESSION:S IS_STORED:S IS_HIDDEN:B SPANNER_STATE:S`,
  TABLE_CONSTRAINTS: `CONSTRAINT_CATALOG:S CONSTRAINT_SCHEMA:S CONSTRAINT_NAME:S ${T} CONSTRAINT_TYPE:S IS_DEFERRABLE:S INITIALLY_DEFERRED:S ENFORCED:S`,
  KEY_COLUMN_USAGE: `CONSTRAINT_CATALOG:S CONSTRAINT_SCHEMA:S CONSTRAINT_NAME:S ${T} COLUMN_NAME:S ORDINAL_POSITION:I POSITION_IN_UNIQUE_CONSTRAINT:I`,
  INDEXES: `${T} INDEX_NAME:S INDEX_TYPE:S PARENT_TABLE_NAME:S IS_UNIQUE:B IS_NULL_FILTERED:B INDEX_STATE:S SPANNER_IS_MANAGED:B`,
  INDEX_COLUMNS: `${T} INDEX_NAME:S INDEX_TYPE:S COLUMN_NAME:S ORDINAL_POSITION:I COLUMN_ORDERING:S IS_NULLABLE:S SPANNER_TYPE:S`,
  DATABASE_OPTIONS: 'CATALOG_NAME:S SCHEMA_NAME:S OPTION_NAME:S OPTION_TYPE:S OPTION_VALUE:S',
  CHANGE_STREAMS: `${CS} ALL:B`,
  CHANGE_STREAM_TABLES: `${CS} ${T} ALL_COLUMNS:B`,
  CHANGE_STREAM_COLUMNS: `${CS} ${T} COLUMN_NAME:S`,
  CHANGE_STREAM_OPTIONS: `${CS} OPTION_NAME:S OPTION_TYPE:S OPTION_VALUE:S`,
};
const HOOK_VIEWS = [
  'CHANGE_STREAMS',
  'CHANGE_STREAM_TABLES',
  'CHANGE_STREAM_COLUMNS',
  'CHANGE_STREAM_OPTIONS',
];

type Rec = Record<string, WireValue>;
/** The default schema's catalog and schema name. */
type Base = { TABLE_CATALOG: string; TABLE_SCHEMA: string };

function columnsOf(view: string): Array<[string, Kind]> {
  return (VIEWS[view] ?? '').split(' ').map((c) => c.split(':') as [string, Kind]);
}

/** Maintains the INFORMATION_SCHEMA tables of one database. */
export class InformationSchema {
  private filledVersion = -1;
  private filled: Schema | undefined;
  /** The schema the tables were last filled from (the live one, or a version a stale read asked for). */
  private schema: Schema;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly live: Schema,
    private readonly catalog: string,
    private readonly hooks?: ChangeStreamHooks,
  ) {
    this.schema = live;
    db.exec(`ATTACH DATABASE ':memory:' AS information_schema`);
    for (const view of Object.keys(VIEWS)) {
      const cols = columnsOf(view).map(([n]) => qi(this.name(n)));
      db.exec(`CREATE TABLE information_schema.${qi(this.name(view))} (${cols.join(', ')})`);
    }
  }

  /** Result type of a column of a view (undefined when unknown). */
  typeOf(view: string, column: string): SpannerTypeJson | undefined {
    const kind = columnsOf(view.toUpperCase()).find(([n]) => n === column.toUpperCase())?.[1];
    if (!kind) return undefined;
    if (kind === 'I') return { code: 'INT64' };
    return kind === 'B' && this.schema.dialect !== 'POSTGRESQL' ? { code: 'BOOL' } : { code: 'STRING' };
  }

  /** The columns of a view (names in the dialect's case) with their types, or undefined for no such view. */
  columns(view: string): Array<{ name: string; type: SpannerTypeJson }> | undefined {
    const v = view.toUpperCase();
    if (!VIEWS[v]) return undefined;
    return columnsOf(v).map(([n]) => ({ name: this.name(n), type: this.typeOf(v, n) as SpannerTypeJson }));
  }

  /** The SQLite name of a view's table. */
  sqlName(view: string): string {
    return `information_schema.${qi(this.name(view.toUpperCase()))}`;
  }

  /**
   * Refills the tables from `schema` (the live one, or the version a read at an earlier timestamp sees) when
   * they were filled from another schema or it changed since. The change-stream views are always current.
   */
  refresh(schema: Schema = this.live): void {
    if (this.filled === schema && this.filledVersion === schema.version) return;
    this.schema = schema;
    this.db.transaction(() => {
      for (const view of Object.keys(VIEWS)) this.fill(view, this.rows(view));
    })();
    this.filled = schema;
    this.filledVersion = schema.version;
  }

  private name(n: string): string {
    return this.schema.dialect === 'POSTGRESQL' ? n.toLowerCase() : n;
  }

  private fill(view: string, rows: Rec[]): void {
    const table = `information_schema.${qi(this.name(view))}`;
    this.db.exec(`DELETE FROM ${table}`);
    const cols = columnsOf(view);
    const insert = this.db.prepare(`INSERT INTO ${table} VALUES (${cols.map(() => '?').join(', ')})`);
    for (const r of rows) {
      const values = cols.map(([n]) => {
        const raw = r[n] ?? r[n.toLowerCase()] ?? null;
        // Hook rows carry booleans; PostgreSQL's INFORMATION_SCHEMA spells them YES / NO.
        const w = typeof raw === 'boolean' ? this.bool(raw) : raw;
        return wireToStored(w, this.typeOf(view, n) ?? { code: 'STRING' }) as StoredValue;
      });
      insert.run(...values);
    }
  }

  private bool(b: boolean): WireValue {
    return this.schema.dialect === 'POSTGRESQL' ? (b ? 'YES' : 'NO') : b;
  }

  private rows(view: string): Rec[] {
    if (HOOK_VIEWS.includes(view)) return this.hooks?.informationSchema(view) ?? [];
    const pg = this.schema.dialect === 'POSTGRESQL';
    const base = { TABLE_CATALOG: pg ? this.catalog : '', TABLE_SCHEMA: pg ? 'public' : '' };
    const tables = [...this.schema.tablesByName.values()];
    const named = (name: string) => this.named(base, name);
    switch (view) {
      case 'SCHEMATA':
        return [base.TABLE_SCHEMA, ...this.schema.namedSchemas.values()].map((n) => ({
          CATALOG_NAME: base.TABLE_CATALOG,
          SCHEMA_NAME: n,
          EFFECTIVE_TIMESTAMP: null,
        }));
      case 'TABLES':
        return tables.map((t) => ({
          ...named(t.name),
          TABLE_TYPE: 'BASE TABLE',
          PARENT_TABLE_NAME: t.parent ? splitName(t.parent)[1] : null,
          ON_DELETE_ACTION: t.parent ? (t.onDeleteCascade ? 'CASCADE' : 'NO ACTION') : null,
          SPANNER_STATE: 'COMMITTED',
          INTERLEAVE_TYPE: t.parent ? 'IN PARENT' : null,
        }));
      case 'COLUMNS':
        return tables.flatMap((t) =>
          t.columns.map((c, i) => ({
            ...named(t.name),
            COLUMN_NAME: c.name,
            ORDINAL_POSITION: String(i + 1),
            DATA_TYPE: pg ? pgDataType(c.ct) : null,
            IS_NULLABLE: c.nullable ? 'YES' : 'NO',
            SPANNER_TYPE: spannerTypeName(c.ct, this.schema.dialect),
            IS_GENERATED: c.generated ? 'ALWAYS' : 'NEVER',
            GENERATION_EXPRESSION: c.generated?.expression ?? null,
            IS_STORED: c.generated ? (c.generated.stored ? 'YES' : 'NO') : null,
            IS_HIDDEN: this.bool(c.hidden === true),
            SPANNER_STATE: 'COMMITTED',
          })),
        );
      case 'TABLE_CONSTRAINTS':
        return tables.map((t) => ({
          CONSTRAINT_CATALOG: base.TABLE_CATALOG,
          CONSTRAINT_SCHEMA: named(t.name).TABLE_SCHEMA,
          CONSTRAINT_NAME: `PK_${splitName(t.name)[1]}`,
          ...named(t.name),
          CONSTRAINT_TYPE: 'PRIMARY KEY',
          IS_DEFERRABLE: 'NO',
          INITIALLY_DEFERRED: 'NO',
          ENFORCED: 'YES',
        }));
      case 'KEY_COLUMN_USAGE':
        return tables.flatMap((t) =>
          t.primaryKey.map((k, i) => ({
            CONSTRAINT_CATALOG: base.TABLE_CATALOG,
            CONSTRAINT_SCHEMA: named(t.name).TABLE_SCHEMA,
            CONSTRAINT_NAME: `PK_${splitName(t.name)[1]}`,
            ...named(t.name),
            COLUMN_NAME: k.name,
            ORDINAL_POSITION: String(i + 1),
          })),
        );
      case 'INDEXES':
        return this.indexRows(base);
      case 'INDEX_COLUMNS':
        return this.indexColumnRows(base);
      default:
        return this.optionRows(base.TABLE_CATALOG, base.TABLE_SCHEMA);
    }
  }

  private indexRows(base: Base): Rec[] {
    const pks = [...this.schema.tablesByName.values()].map((t) => ({
      ...this.named(base, t.name),
      INDEX_NAME: 'PRIMARY_KEY',
      INDEX_TYPE: 'PRIMARY_KEY',
      PARENT_TABLE_NAME: t.parent ? splitName(t.parent)[1] : '',
      IS_UNIQUE: this.bool(true),
      IS_NULL_FILTERED: this.bool(false),
      INDEX_STATE: null,
      SPANNER_IS_MANAGED: this.bool(false),
    }));
    const secondary = [...this.schema.indexesByName.values()].map((i) => ({
      ...this.named(base, i.table),
      INDEX_NAME: splitName(i.name)[1],
      INDEX_TYPE: 'INDEX',
      PARENT_TABLE_NAME: i.interleaveIn ? splitName(i.interleaveIn)[1] : '',
      IS_UNIQUE: this.bool(i.unique),
      IS_NULL_FILTERED: this.bool(i.nullFiltered),
      INDEX_STATE: 'READ_WRITE',
      SPANNER_IS_MANAGED: this.bool(false),
    }));
    return [...pks, ...secondary];
  }

  private indexColumnRows(base: Base): Rec[] {
    const out: Rec[] = [];
    const add = (
      table: string,
      index: string,
      type: string,
      col: string,
      pos: number | null,
      desc?: boolean,
    ) => {
      const t = this.schema.get(table);
      const c = this.schema.column(t, col);
      out.push({
        ...this.named(base, t.name),
        INDEX_NAME: splitName(index)[1],
        INDEX_TYPE: type,
        COLUMN_NAME: c.name,
        ORDINAL_POSITION: pos === null ? null : String(pos),
        COLUMN_ORDERING: desc === undefined ? null : desc ? 'DESC' : 'ASC',
        IS_NULLABLE: c.nullable ? 'YES' : 'NO',
        SPANNER_TYPE: spannerTypeName(c.ct, this.schema.dialect),
      });
    };
    for (const t of this.schema.tablesByName.values())
      for (const [i, k] of t.primaryKey.entries())
        add(t.name, 'PRIMARY_KEY', 'PRIMARY_KEY', k.name, i + 1, k.desc);
    for (const i of this.schema.indexesByName.values()) {
      for (const [n, k] of i.keys.entries()) add(i.table, i.name, 'INDEX', k.name, n + 1, k.desc);
      for (const s of i.storing) add(i.table, i.name, 'INDEX', s, null);
    }
    return out;
  }

  /** TABLE_CATALOG, TABLE_SCHEMA and TABLE_NAME of a (possibly qualified) name: `sch.T` is `sch` and `T`. */
  private named(base: Base, name: string) {
    const [schema, table] = splitName(name);
    return {
      TABLE_CATALOG: base.TABLE_CATALOG,
      TABLE_SCHEMA: schema || base.TABLE_SCHEMA,
      TABLE_NAME: table,
    };
  }

  private optionRows(catalog: WireValue, schemaName: WireValue): Rec[] {
    const opts: Array<[string, string, string]> = [['database_dialect', 'STRING', this.schema.dialect]];
    for (const [k, v] of this.schema.options) opts.push([k, 'STRING', v]);
    return opts.map(([n, t, v]) => ({
      CATALOG_NAME: catalog,
      SCHEMA_NAME: schemaName,
      OPTION_NAME: n,
      OPTION_TYPE: this.schema.dialect === 'POSTGRESQL' ? 'character varying' : t,
      OPTION_VALUE: v,
    }));
  }
}
