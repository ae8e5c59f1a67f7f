/**
 * SpannerCatalogReader against the Spanner emulator (official client), both dialects: dialect, stream scope
 * and options, table schema, rows at an exact past timestamp, and every column type read from a row mapping
 * to exactly what the same value read from the change stream maps to.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import {
  type ChangeStreamEngine,
  createChangeStreamEngine,
} from '../../local/emulators/spanner/change-streams/engine';
import { createTestDatabase, type TestDatabase } from '../../local/emulators/spanner/client';
import { type RunningSpannerEmulator, startSpannerEmulator } from '../../local/emulators/spanner/server';
import { SpannerCatalogReader } from '../../shared/adapters/spanner/catalog';
import { SpannerChangeSource } from '../../shared/adapters/spanner/change-source';
import type { DataChangeRecord, Dialect, JsonValue } from '../../shared/domain/change-record';
import { addNanos, fromNanos, fromSecondsAndNanos, type Timestamp } from '../../shared/domain/timestamp';
import { toWriterValue, type ValueIssue, type WriterValue } from '../../shared/domain/value-mapping';

let emu: RunningSpannerEmulator;
const engines: ChangeStreamEngine[] = [];
const dbs: Partial<Record<Dialect, TestDatabase>> = {};

const DDL: Record<Dialect, string[]> = {
  GOOGLE_STANDARD_SQL: [
    `CREATE TABLE AllTypes (Id INT64 NOT NULL, Flag BOOL, F64 FLOAT64, F32 FLOAT32, Num NUMERIC, Txt STRING(MAX),
     Raw BYTES(MAX), Day DATE, At TIMESTAMP, Doc JSON, Ints ARRAY<INT64>, Floats ARRAY<FLOAT64>,
     Texts ARRAY<STRING(MAX)>, Days ARRAY<DATE>, Ats ARRAY<TIMESTAMP>, Nums ARRAY<NUMERIC>, Raws ARRAY<BYTES(MAX)>,
     Flags ARRAY<BOOL>, Docs ARRAY<JSON>) PRIMARY KEY (Id)`,
    'CREATE TABLE Other (Id STRING(36) NOT NULL, A STRING(MAX), B INT64) PRIMARY KEY (Id)',
    "CREATE CHANGE STREAM Everything FOR ALL OPTIONS (value_capture_type = 'NEW_ROW', retention_period = '36h')",
    'CREATE CHANGE STREAM Narrow FOR Other(A)',
  ],
  POSTGRESQL: [
    `CREATE TABLE alltypes (id bigint NOT NULL PRIMARY KEY, flag boolean, f64 float8, f32 real, num numeric,
     txt varchar, raw bytea, day date, at timestamptz, doc jsonb, ints bigint[], floats float8[], texts text[],
     days date[], ats timestamptz[], nums numeric[], raws bytea[], flags boolean[], docs jsonb[])`,
    'CREATE TABLE other (id varchar(36) NOT NULL PRIMARY KEY, a text, b bigint)',
    "CREATE CHANGE STREAM everything FOR ALL WITH (value_capture_type = 'NEW_ROW', retention_period = '36h')",
    'CREATE CHANGE STREAM narrow FOR other(a)',
  ],
};

const name = (dialect: Dialect, gsql: string) => (dialect === 'POSTGRESQL' ? gsql.toLowerCase() : gsql);

beforeAll(async () => {
  emu = await startSpannerEmulator({
    port: 0,
    changeStreams: () => {
      const engine = createChangeStreamEngine({ now: () => emu.admin.nowNs(), initialPartitions: 2 });
      engines.push(engine);
      return engine;
    },
  });
  dbs.GOOGLE_STANDARD_SQL = await createTestDatabase(emu, 'GOOGLE_STANDARD_SQL', DDL.GOOGLE_STANDARD_SQL);
  dbs.POSTGRESQL = await createTestDatabase(emu, 'POSTGRESQL', DDL.POSTGRESQL);
});

afterAll(async () => {
  for (const e of engines) e.admin.close();
  await dbs.GOOGLE_STANDARD_SQL?.close();
  await dbs.POSTGRESQL?.close();
  await emu?.stop();
});

function tsOf(resp: { commitTimestamp?: { seconds?: unknown; nanos?: number | null } | null }): Timestamp {
  const t = resp.commitTimestamp!;
  return fromSecondsAndNanos(String(t.seconds), t.nanos ?? 0);
}

/** Values of every type, with edge cases, keyed by GoogleSQL column name. */
function sampleRow(dialect: Dialect, id: string): Record<string, unknown> {
  const pg = dialect === 'POSTGRESQL';
  const row: Record<string, unknown> = {
    Id: id,
    Flag: true,
    F64: Number.NaN,
    F32: 1.5,
    Num: pg ? '123456789012345678901234567890.123456789012' : '-98765432109876543210.123456789',
    Txt: 'héllo \u{1F600} "quoted"',
    Raw: Buffer.from([0, 1, 2, 250, 251, 252]),
    Day: '1969-07-20',
    At: '2024-02-29T23:59:59.123456789Z',
    Doc: { b: [1, 'two', null], a: { nested: true } },
    Ints: ['9223372036854775807', null, '-9223372036854775808'],
    Floats: [1.25, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY],
    Texts: ['x', '', null],
    Days: ['2000-01-01', '9999-12-31'],
    Ats: ['1970-01-01T00:00:00.000000001Z'],
    Nums: ['0.5', '-1'],
    Raws: [Buffer.from('hi')],
    Flags: [false, true],
    Docs: [{ k: 1 }],
  };
  return pg ? Object.fromEntries(Object.entries(row).map(([k, v]) => [k.toLowerCase(), v])) : row;
}

function recordRow(record: DataChangeRecord): Record<string, WriterValue> {
  const mod = record.mods[0]!;
  const values: Record<string, JsonValue> = { ...mod.keys, ...mod.newValues };
  const issues: ValueIssue[] = [];
  return Object.fromEntries(
    record.columnTypes.map((c) => [c.name, toWriterValue(c.name, c.type, values[c.name] ?? null, issues)]),
  );
}

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])('SpannerCatalogReader (%s)', (dialect) => {
  const db = () => dbs[dialect]!;
  const catalog = () => new SpannerCatalogReader(db().database);

  it('reads the dialect', async () => {
    expect(await catalog().dialect()).toBe(dialect);
  });

  it('reads stream scopes and options, and undefined for a missing stream', async () => {
    const c = catalog();
    const all = await c.streamScope(name(dialect, 'Everything'));
    expect(all?.all).toBe(true);
    const narrow = await c.streamScope(name(dialect, 'Narrow'));
    expect(narrow?.all).toBe(false);
    expect(narrow?.tables.get(name(dialect, 'Other'))).toEqual({ columns: [name(dialect, 'A')] });
    expect(await c.streamScope('Missing')).toBeUndefined();
    const options = await c.streamOptions(name(dialect, 'Everything'));
    expect(options.valueCaptureType).toBe('NEW_ROW');
    expect(options.retentionSeconds).toBe(36 * 3600);
    expect((await c.streamOptions(name(dialect, 'Narrow'))).valueCaptureType).toBe('OLD_AND_NEW_VALUES');
  });

  it('reads a table schema in key and column order', async () => {
    const schema = await catalog().tableSchema(name(dialect, 'AllTypes'));
    expect(schema.primaryKey).toEqual([name(dialect, 'Id')]);
    expect(schema.columns).toHaveLength(19);
    expect(schema.columns[0]).toMatchObject({
      name: name(dialect, 'Id'),
      type: { code: 'INT64' },
      nullable: false,
    });
    const num = schema.columns.find((c) => c.name === name(dialect, 'Num'))!;
    expect(num.type).toEqual(
      dialect === 'POSTGRESQL' ? { code: 'NUMERIC', typeAnnotation: 'PG_NUMERIC' } : { code: 'NUMERIC' },
    );
    await expect(catalog().tableSchema('NoSuchTable')).rejects.toThrow(/not found/);
  });

  it('reads rows at exactly a past timestamp over a key set: old images, and no row before the insert', async () => {
    const other = name(dialect, 'Other');
    const table = db().database.table(other);
    const [id, a, b] = [name(dialect, 'Id'), name(dialect, 'A'), name(dialect, 'B')];
    const [r1] = await table.insert([
      { [id]: 'row-1', [a]: 'first', [b]: '7' },
      { [id]: 'row-2', [a]: 'other', [b]: '9' },
    ]);
    const t1 = tsOf(r1);
    const [r2] = await table.update({ [id]: 'row-1', [a]: 'second', [b]: '8' });
    const t2 = tsOf(r2);
    const c = catalog();
    const keys = [{ name: id, type: { code: 'STRING' } }];
    const both = [{ [id]: 'row-1' }, { [id]: 'row-2' }, { [id]: 'missing' }];
    expect((await c.readRowsAt(other, keys, both, addNanos(t1, -1))).rows).toEqual([]);
    const at1 = await c.readRowsAt(other, keys, both, t1);
    expect(at1.columns.map((x) => [x.name, x.type.code])).toEqual([
      [id, 'STRING'],
      [a, 'STRING'],
      [b, 'INT64'],
    ]);
    expect(at1.rows).toEqual([
      { [id]: 'row-1', [a]: 'first', [b]: '7' },
      { [id]: 'row-2', [a]: 'other', [b]: '9' },
    ]);
    expect((await c.readRowsAt(other, keys, [{ [id]: 'row-1' }], t2)).rows).toEqual([
      { [id]: 'row-1', [a]: 'second', [b]: '8' },
    ]);
  });

  it('reads schemas as of a timestamp, every table at once, and refreshes a cached one on request', async () => {
    const c = catalog();
    const before = fromNanos(emu.admin.nowNs());
    const cached = await c.tableSchema(name(dialect, 'Other'));
    const column = dialect === 'POSTGRESQL' ? 'later bigint' : 'Later INT64';
    const [op] = await db().database.updateSchema([
      `ALTER TABLE ${name(dialect, 'Other')} ADD COLUMN ${column}`,
    ]);
    await op.promise();
    const names = (s: { columns: Array<{ name: string }> }) => s.columns.map((x) => x.name);
    expect(names(await c.tableSchema(name(dialect, 'Other')))).toEqual(names(cached));
    const fresh = await c.tableSchema(name(dialect, 'Other'), { fresh: true });
    expect(names(fresh)).toEqual([...names(cached), name(dialect, 'Later')]);
    expect(names(await c.tableSchema(name(dialect, 'Other'), { at: before }))).toEqual(names(cached));
    const all = await c.tableSchemas();
    expect(all.map((t) => t.name)).toEqual([name(dialect, 'AllTypes'), name(dialect, 'Other')]);
    expect(names(all[1]!)).toEqual(names(fresh));
    expect(all[1]?.primaryKey).toEqual([name(dialect, 'Id')]);
    // Before a column existed, a keyed read does not return it (the read sees that schema version).
    const rows = await c.readRowsAt(
      name(dialect, 'Other'),
      [{ name: name(dialect, 'Id'), type: { code: 'STRING' } }],
      [{ [name(dialect, 'Id')]: 'row-2' }],
      before,
    );
    expect(rows.columns.map((x) => x.name)).toEqual(names(cached));
  });

  it('maps every type read from a row exactly as the same value read from the change stream', async () => {
    const from = fromNanos(emu.admin.nowNs());
    const table = name(dialect, 'AllTypes');
    const [resp] = await db().database.table(table).insert(sampleRow(dialect, '42'));
    const at = tsOf(resp);
    const source = new SpannerChangeSource(db().database, { dialect, stream: name(dialect, 'Everything') });
    const records: DataChangeRecord[] = [];
    for await (const init of source.read({ partitionToken: null, from, to: null, heartbeatMs: 200 })) {
      if (init.kind !== 'child-partitions') continue;
      for (const child of init.childPartitions) {
        for await (const r of source.read({ partitionToken: child.token, from, to: at, heartbeatMs: 200 })) {
          if (r.kind === 'data-change' && r.tableName === table) records.push(r);
        }
      }
    }
    expect(records).toHaveLength(1);
    const fromStream = recordRow(records[0]!);
    const issues: ValueIssue[] = [];
    const c = new SpannerCatalogReader(db().database);
    const read = await c.readRowsAt(
      table,
      [{ name: name(dialect, 'Id'), type: { code: 'INT64' } }],
      [{ [name(dialect, 'Id')]: '42' }],
      at,
    );
    const types = new Map(read.columns.map((x) => [x.name, x.type]));
    const values = read.rows[0]!;
    const fromRow = Object.fromEntries(
      Object.keys(values).map((k) => [k, toWriterValue(k, types.get(k)!, values[k] ?? null, issues)]),
    );
    expect(fromRow).toEqual(fromStream);
    expect(Object.keys(fromRow)).toHaveLength(19);
    expect(fromRow[name(dialect, 'Ints')]).toEqual(['9223372036854775807', '-9223372036854775808']);
    expect(fromRow[name(dialect, 'At')]).toBe('1709251199123456');
    expect(issues.map((i) => i.kind)).toEqual(['null-array-element', 'null-array-element']);
  });
});
