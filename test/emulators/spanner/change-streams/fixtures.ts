/** Test helpers: a fake schema, hand-built commits, and a decoder of the engine's wire rows. */

import {
  type ChangeStreamEngine,
  createChangeStreamEngine,
} from '../../../../local/emulators/spanner/change-streams/engine';
import type {
  ColumnInfo,
  RowChange,
  SchemaView,
  SpannerTypeJson,
  TableInfo,
  WireValue,
} from '../../../../local/emulators/spanner/hooks';
import { formatTimestamp, fromNanos, parseTimestamp } from '../../../../shared/domain/timestamp';

const t = (code: string, extra: Partial<SpannerTypeJson> = {}): SpannerTypeJson => ({ code, ...extra });

/** Columns of the given type codes, in the order given. */
const ofTypes = (codes: Record<string, string>): Array<[string, SpannerTypeJson]> =>
  Object.entries(codes).map(([name, code]) => [name, t(code)]);

function table(name: string, cols: Array<[string, SpannerTypeJson]>, primaryKey: string[]): TableInfo {
  const columns: ColumnInfo[] = cols.map(([n, type], i) => ({
    name: n,
    type,
    ordinalPosition: i + 1,
    isPrimaryKey: primaryKey.includes(n),
    nullable: !primaryKey.includes(n),
  }));
  return { name, columns, primaryKey };
}

/** A schema with a table holding every column type, and a two-column-key table. */
export function fakeSchema(dialect: SchemaView['dialect'] = 'GOOGLE_STANDARD_SQL'): SchemaView {
  const pg = dialect === 'POSTGRESQL';
  const tables = [
    table(
      'Singers',
      [
        ...ofTypes({ SingerId: 'INT64', Name: 'STRING', Score: 'FLOAT64', Ratio: 'FLOAT32', Active: 'BOOL' }),
        ...ofTypes({ Born: 'DATE', Updated: 'TIMESTAMP', Photo: 'BYTES' }),
        ['Balance', pg ? t('NUMERIC', { typeAnnotation: 'PG_NUMERIC' }) : t('NUMERIC')],
        ['Meta', pg ? t('JSON', { typeAnnotation: 'PG_JSONB' }) : t('JSON')],
        ['Tags', t('ARRAY', { arrayElementType: t('STRING') })],
      ],
      ['SingerId'],
    ),
    table('Albums', ofTypes({ SingerId: 'INT64', AlbumId: 'STRING', Title: 'STRING', Plays: 'INT64' }), [
      'SingerId',
      'AlbumId',
    ]),
  ];
  return {
    dialect,
    table: (name) => tables.find((x) => x.name.toLowerCase() === name.toLowerCase()),
    tables: () => tables,
  };
}

/** A manual clock (ns) that tests advance; starts near real time so retention checks behave. */
export function manualClock(): { now: () => bigint; advance: (ms: number) => bigint } {
  let value = BigInt(Date.now()) * 1_000_000n;
  return {
    now: () => value,
    advance: (ms) => {
      value += BigInt(Math.round(ms * 1_000_000));
      return value;
    },
  };
}

/** An engine with a stream created by `ddl` at the clock's now. */
export function engineWith(
  ddl: string[],
  opts: { dialect?: SchemaView['dialect']; now?: () => bigint; initialPartitions?: number } = {},
): { engine: ChangeStreamEngine; schema: SchemaView } {
  const schema = fakeSchema(opts.dialect);
  const engine = createChangeStreamEngine({ now: opts.now, initialPartitions: opts.initialPartitions ?? 2 });
  for (const s of ddl) engine.applyDdl(s, schema, opts.now ? opts.now() : BigInt(Date.now()) * 1_000_000n);
  return { engine, schema };
}

/** A full Singers row in wire form. */
export function singer(id: number, overrides: Record<string, WireValue> = {}): Record<string, WireValue> {
  return {
    SingerId: String(id),
    Name: `n${id}`,
    Score: 1.5,
    Ratio: 0.25,
    Active: true,
    Born: '2000-01-02',
    Updated: '2024-05-06T07:08:09.123456789Z',
    Photo: 'AAEC',
    Balance: '12.50',
    Meta: '{"a":1}',
    Tags: ['x', null],
    ...overrides,
  };
}

/** A row change of singer `id`. */
function singerChange(
  id: number,
  modType: RowChange['modType'],
  oldRow: RowChange['oldRow'],
  newRow: RowChange['newRow'],
  writtenColumns: string[],
): RowChange {
  return { table: 'Singers', modType, keys: { SingerId: String(id) }, oldRow, newRow, writtenColumns };
}

/** Row changes for Singers. */
export function ins(id: number, row = singer(id)): RowChange {
  return singerChange(
    id,
    'INSERT',
    null,
    row,
    Object.keys(row).filter((k) => k !== 'SingerId'),
  );
}
export function upd(
  id: number,
  before: Record<string, WireValue>,
  set: Record<string, WireValue>,
): RowChange {
  return singerChange(id, 'UPDATE', before, { ...before, ...set }, Object.keys(set));
}
export function del(id: number, before: Record<string, WireValue>): RowChange {
  return singerChange(id, 'DELETE', before, null, []);
}

/** A decoded row, whatever the dialect. */
export interface Decoded {
  kind: 'data' | 'heartbeat' | 'child';
  // biome-ignore lint/suspicious/noExplicitAny: test-side view of decoded JSON
  body: any;
}

/** Decodes a GoogleSQL `ChangeRecord` row (JSON fields parsed) or a PostgreSQL JSONB row. */
export function decode(row: WireValue[], pg: boolean): Decoded {
  if (pg) {
    const obj = JSON.parse(String(row[0]));
    const [key] = Object.keys(obj);
    if (Object.keys(obj).length !== 1) throw new Error('PG row must have exactly one key');
    const kind = key === 'data_change_record' ? 'data' : key === 'heartbeat_record' ? 'heartbeat' : 'child';
    return { kind, body: obj[key as string] };
  }
  const [outer] = row as [WireValue[][]];
  if (outer.length !== 1) throw new Error('ChangeRecord must hold one element');
  const [data, hb, child] = outer[0] as [WireValue[][], WireValue[][], WireValue[][]];
  if ([data, hb, child].filter((a) => a.length > 0).length !== 1) throw new Error('exactly one record kind');
  if (hb.length) return { kind: 'heartbeat', body: { timestamp: hb[0]?.[0] } };
  if (child.length) {
    const [start, seq, children] = child[0] as [string, string, WireValue[][]];
    return {
      kind: 'child',
      body: {
        start_timestamp: start,
        record_sequence: seq,
        child_partitions: children.map(([token, parents]) => ({ token, parent_partition_tokens: parents })),
      },
    };
  }
  const d = data[0] as WireValue[];
  const names = [
    'commit_timestamp',
    'record_sequence',
    'server_transaction_id',
    'is_last_record_in_transaction_in_partition',
    'table_name',
    'column_types',
    'mods',
    'mod_type',
    'value_capture_type',
    'number_of_records_in_transaction',
    'number_of_partitions_in_transaction',
    'transaction_tag',
    'is_system_transaction',
  ];
  // biome-ignore lint/suspicious/noExplicitAny: test-side view of decoded JSON
  const body: any = Object.fromEntries(names.map((n, i) => [n, d[i]]));
  body.column_types = (body.column_types as WireValue[][]).map(([name, type, pk, pos]) => ({
    name,
    type: JSON.parse(String(type)),
    is_primary_key: pk,
    ordinal_position: Number(pos),
  }));
  body.mods = (body.mods as WireValue[][]).map(([k, n, o]) => ({
    keys: JSON.parse(String(k)),
    new_values: JSON.parse(String(n)),
    old_values: JSON.parse(String(o)),
  }));
  body.number_of_records_in_transaction = Number(body.number_of_records_in_transaction);
  body.number_of_partitions_in_transaction = Number(body.number_of_partitions_in_transaction);
  return { kind: 'data', body };
}

/** RFC 3339 text of a ns timestamp, for query parameters. */
export const iso = (ns: bigint): string => formatTimestamp(fromNanos(ns));
/** ns of an RFC 3339 text. */
export const ns = (text: string): bigint => BigInt(parseTimestamp(text));

/** Reads every row of a query (bounded by `limit`). */
export async function collect(rows: AsyncIterable<WireValue[]>, limit = 10_000): Promise<WireValue[][]> {
  const out: WireValue[][] = [];
  for await (const r of rows) {
    out.push(r);
    if (out.length >= limit) break;
  }
  return out;
}

const STRONG = { singleUse: { readOnly: { strong: true, returnReadTimestamp: true } } };

/**
 * Routes a change stream read, streamed in a strong single-use transaction; its four parameters, in this
 * order, are the start and end timestamps, the partition token and the heartbeat interval.
 */
function routeRead(
  engine: ChangeStreamEngine,
  schema: SchemaView,
  sql: string,
  params: Array<[string, WireValue]>,
  signal: AbortSignal,
) {
  const types = [{ code: 'TIMESTAMP' }, { code: 'TIMESTAMP' }, { code: 'STRING' }, { code: 'INT64' }];
  const q = engine.routeQuery({
    sql,
    params: Object.fromEntries(params),
    paramTypes: Object.fromEntries(params.map(([name], i) => [name, types[i]!])),
    transaction: STRONG,
    streaming: true,
    schema,
    signal,
  });
  if (!q) throw new Error('not routed');
  return q;
}

/** Runs a GoogleSQL partition or initial query with named parameters. */
export function gsqlQuery(
  engine: ChangeStreamEngine,
  schema: SchemaView,
  stream: string,
  p: { start: bigint | null; end?: bigint | null; token?: string | null; hb?: number | null },
  signal = new AbortController().signal,
) {
  return routeRead(
    engine,
    schema,
    `SELECT ChangeRecord FROM READ_${stream}(start_timestamp => @start, end_timestamp => @end, partition_token => @token, heartbeat_milliseconds => @hb)`,
    [
      ['start', p.start === null ? null : iso(p.start)],
      ['end', p.end == null ? null : iso(p.end)],
      ['token', p.token ?? null],
      ['hb', p.hb === null ? null : String(p.hb ?? 1000)],
    ],
    signal,
  );
}

/** Runs a PostgreSQL query `SELECT * FROM "spanner"."read_json_<stream>"($1, $2, $3, $4, null)`. */
export function pgQuery(
  engine: ChangeStreamEngine,
  schema: SchemaView,
  stream: string,
  p: { start: bigint; end?: bigint | null; token?: string | null; hb?: number },
) {
  return routeRead(
    engine,
    schema,
    `SELECT * FROM "spanner"."read_json_${stream}"($1, $2, $3, $4, null)`,
    [
      ['p1', iso(p.start)],
      ['p2', p.end == null ? null : iso(p.end)],
      ['p3', p.token ?? null],
      ['p4', String(p.hb ?? 1000)],
    ],
    new AbortController().signal,
  );
}
