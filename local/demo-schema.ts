/**
 * The demo database of the local stack: three tables of varied column types and one change stream that
 * watches them all with `NEW_ROW_AND_OLD_VALUES`, in either dialect. The column kinds drive the workload's
 * value generator and the verifier's comparison, so both stay in step with the DDL.
 */
import type { Dialect } from '../shared/domain/change-record';
import { destinationPart } from '../shared/domain/table-rules';
import { PROTO_ENUM, PROTO_MESSAGE } from './proto-types';

/** What a scalar column holds, independent of the dialect's type name. */
export type ScalarKind =
  | 'int'
  | 'string'
  | 'numeric'
  | 'float'
  | 'float32'
  | 'bool'
  | 'date'
  | 'timestamp'
  | 'bytes'
  | 'json'
  | 'uuid'
  /** GoogleSQL only: a PROTO column of the local stack's bundle (`local/proto-types.ts`). */
  | 'proto'
  /** GoogleSQL only: an ENUM column of the local stack's bundle. */
  | 'enum';

/** What a column holds: a scalar kind, an array of one (`int[]`), or `strings` (the demo's string array). */
export type ColumnKind = ScalarKind | `${ScalarKind}[]` | 'strings';

/** The element kind of an array kind, or undefined for a scalar. */
export function elementKind(kind: ColumnKind): ScalarKind | undefined {
  if (kind === 'strings') return 'string';
  return kind.endsWith('[]') ? (kind.slice(0, -2) as ScalarKind) : undefined;
}

/** One column of a demo table. */
export interface DemoColumn {
  name: string;
  kind: ColumnKind;
  nullable: boolean;
  /** A stored generated column: never written by the workload, compared by the verifier. */
  generated?: boolean;
}

/** One demo table and where it replicates to (`null` when that target is not configured). */
export interface DemoTable {
  /** Table name in Spanner (PascalCase in GoogleSQL, lower case in PostgreSQL). */
  name: string;
  /** Primary-key column names, in key order. */
  key: string[];
  columns: DemoColumn[];
  replica: string | null;
  history: string | null;
}

/** The demo schema of one dialect. */
export interface DemoSchema {
  dialect: Dialect;
  stream: string;
  customers: DemoTable;
  orders: DemoTable;
  /** Pre-filled before the pipeline starts; only a backfill brings its rows to BigQuery. */
  products: DemoTable;
  tables: DemoTable[];
  ddl: string[];
  /** The `proto_descriptors` sent with `ddl`, when a table uses PROTO or ENUM columns. */
  protoDescriptors?: Buffer;
}

const col = (name: string, kind: ColumnKind, nullable = false): DemoColumn => ({ name, kind, nullable });

const GOOGLE_SQL_TYPES: Record<ScalarKind, string> = {
  int: 'INT64',
  string: 'STRING(MAX)',
  numeric: 'NUMERIC',
  float: 'FLOAT64',
  float32: 'FLOAT32',
  bool: 'BOOL',
  date: 'DATE',
  timestamp: 'TIMESTAMP',
  bytes: 'BYTES(MAX)',
  json: 'JSON',
  uuid: 'UUID',
  proto: PROTO_MESSAGE,
  enum: PROTO_ENUM,
};

const POSTGRES_TYPES: Record<ScalarKind, string> = {
  int: 'bigint',
  string: 'varchar',
  numeric: 'numeric',
  float: 'float8',
  float32: 'float4',
  bool: 'boolean',
  date: 'date',
  timestamp: 'timestamptz',
  bytes: 'bytea',
  json: 'jsonb',
  uuid: 'uuid',
  // PostgreSQL has no proto types.
  proto: '',
  enum: '',
};

/** The DDL type name of a column kind in a dialect. */
export function typeName(kind: ColumnKind, pg: boolean): string {
  const types = pg ? POSTGRES_TYPES : GOOGLE_SQL_TYPES;
  const element = elementKind(kind);
  if (!types[element ?? (kind as ScalarKind)])
    throw new Error(`column kind ${kind} has no ${pg ? 'PostgreSQL' : 'GoogleSQL'} type`);
  if (element === undefined) return types[kind as ScalarKind];
  return pg ? `${types[element]}[]` : `ARRAY<${types[element]}>`;
}

function tables(pg: boolean): Pick<DemoSchema, 'customers' | 'orders' | 'products'> {
  const name = (n: string) => (pg ? n.toLowerCase() : n);
  return {
    customers: {
      name: name('Customers'),
      key: ['customer_id'],
      columns: [
        col('customer_id', 'int'),
        col('name', 'string'),
        col('email', 'string', true),
        col('balance', 'numeric'),
        col('active', 'bool'),
        col('score', 'float', true),
        col('birthday', 'date', true),
        col('updated_at', 'timestamp'),
        col('tags', 'strings', true),
        col('profile', 'json', true),
        col('avatar', 'bytes', true),
      ],
      replica: 'customers',
      history: 'customers_history',
    },
    orders: {
      name: name('Orders'),
      key: ['order_id'],
      columns: [
        col('order_id', 'string'),
        col('customer_id', 'int'),
        col('amount', 'numeric'),
        col('quantity', 'int'),
        col('placed_at', 'timestamp'),
        col('status', 'string'),
      ],
      replica: 'orders',
      history: 'orders_history',
    },
    products: {
      name: name('Products'),
      key: ['sku'],
      columns: [col('sku', 'string'), col('title', 'string'), col('price', 'float'), col('stock', 'int')],
      replica: 'products',
      history: null,
    },
  };
}

/** The CREATE TABLE statement of a table in a dialect. */
export function createTable(t: DemoTable, pg: boolean): string {
  const cols = t.columns.map((c) => `${c.name} ${typeName(c.kind, pg)}${c.nullable ? '' : ' NOT NULL'}`);
  const key = t.key.join(', ');
  return pg
    ? `CREATE TABLE ${t.name} (${cols.join(', ')}, PRIMARY KEY (${key}))`
    : `CREATE TABLE ${t.name} (${cols.join(', ')}) PRIMARY KEY (${key})`;
}

/** The value capture types a change stream can have. */
export type CaptureType = 'NEW_ROW_AND_OLD_VALUES' | 'NEW_ROW' | 'OLD_AND_NEW_VALUES' | 'NEW_VALUES';

/** The demo schema and its DDL for a dialect (the stream's capture type is `NEW_ROW_AND_OLD_VALUES` unless given). */
export function demoSchema(dialect: Dialect, capture: CaptureType = 'NEW_ROW_AND_OLD_VALUES'): DemoSchema {
  const pg = dialect === 'POSTGRESQL';
  const t = tables(pg);
  const list = [t.customers, t.orders, t.products];
  const stream = pg ? 'demo_changes' : 'DemoChanges';
  const streamDdl = pg
    ? `CREATE CHANGE STREAM ${stream} FOR ALL WITH (value_capture_type = '${capture}')`
    : `CREATE CHANGE STREAM ${stream} FOR ALL OPTIONS (value_capture_type = '${capture}')`;
  return { dialect, stream, ...t, tables: list, ddl: [...list.map((x) => createTable(x, pg)), streamDdl] };
}

/**
 * `SLUICE_TABLES` of the demo, in the all-tables form: every table the FOR ALL stream watches — also one
 * created while the demo runs — gets a replica `<table>` and a history `<table>_history` by the naming rule;
 * Products, which only a backfill fills, gets a replica only.
 */
export function tablesConfig(schema: DemoSchema): Record<string, unknown> {
  // The rule names a table's targets `{table}` and `{table}_history`; any other naming is an explicit entry.
  const ruled = (t: DemoTable) =>
    t.replica === destinationPart(t.name) && t.history === `${destinationPart(t.name)}_history`;
  const explicit = schema.tables.filter((t) => !ruled(t));
  return {
    '*': { replica: true, history: true },
    ...Object.fromEntries(
      explicit.map((t) => [
        t.name,
        { ...(t.replica ? { replica: t.replica } : {}), ...(t.history ? { history: t.history } : {}) },
      ]),
    ),
  };
}
