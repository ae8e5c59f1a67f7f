/**
 * The writer's ports against both backends: in memory, and the Spanner emulator through the official client
 * in both dialects (SpannerWriterCatalog reading INFORMATION_SCHEMA, SpannerMutationSink over
 * batchWriteAtLeastOnce).
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { createTestDatabase, type TestDatabase } from '../../local/emulators/spanner/client';
import { type RunningSpannerEmulator, startSpannerEmulator } from '../../local/emulators/spanner/server';
import { MemoryMutationSink } from '../../shared/adapters/memory/mutation-sink';
import { MemoryWriterCatalog } from '../../shared/adapters/memory/writer-catalog';
import { wireQuery } from '../../shared/adapters/spanner/gapic-stream';
import { SpannerMutationSink } from '../../shared/adapters/spanner/mutation-sink';
import { SpannerWriterCatalog } from '../../shared/adapters/spanner/writer-catalog';
import type { Dialect } from '../../shared/domain/change-record';
import { formatTimestamp, parseTimestamp } from '../../shared/domain/timestamp';
import type { WriterCatalog } from '../../shared/domain/writer/catalog';
import { typeMutations } from '../../shared/domain/writer/mutations';
import { parseWriteRequest } from '../../shared/domain/writer/request';
import { mutationSinkContract } from './mutation-sink.contract';

const memoryCatalog = (): WriterCatalog => ({
  dialect: 'GOOGLE_STANDARD_SQL',
  tables: [
    {
      name: 'Accounts',
      primaryKey: ['Id'],
      indexes: 1,
      columns: [
        {
          name: 'Id',
          type: { code: 'INT64' },
          typeName: 'INT64',
          nullable: false,
          generated: false,
          indexes: 0,
        },
        {
          name: 'Name',
          type: { code: 'STRING' },
          typeName: 'STRING(MAX)',
          nullable: false,
          generated: false,
          indexes: 1,
        },
        {
          name: 'Balance',
          type: { code: 'FLOAT64' },
          typeName: 'FLOAT64',
          nullable: true,
          generated: false,
          indexes: 0,
        },
      ],
    },
  ],
});

mutationSinkContract('in-memory', async () => {
  const catalog = memoryCatalog();
  return {
    sink: new MemoryMutationSink(catalog),
    catalog: new MemoryWriterCatalog(catalog),
    table: 'Accounts',
    columns: { id: 'Id', name: 'Name', balance: 'Balance' },
  };
});

let emu: RunningSpannerEmulator;
const open: TestDatabase[] = [];

beforeAll(async () => {
  emu = await startSpannerEmulator({ port: 0, changeStreams: false });
});

afterAll(async () => {
  for (const t of open) await t.close();
  await emu?.stop();
});

/** The Accounts table of each dialect, with an index on its name. */
const ACCOUNTS = {
  GOOGLE_STANDARD_SQL: {
    label: 'GoogleSQL',
    ddl: [
      'CREATE TABLE Accounts (Id INT64 NOT NULL, Name STRING(MAX) NOT NULL, Balance FLOAT64) PRIMARY KEY (Id)',
      'CREATE INDEX AccountsByName ON Accounts (Name)',
    ],
    table: 'Accounts',
    columns: { id: 'Id', name: 'Name', balance: 'Balance' },
  },
  POSTGRESQL: {
    label: 'PostgreSQL',
    ddl: [
      'CREATE TABLE accounts (id bigint NOT NULL PRIMARY KEY, name text NOT NULL, balance float8)',
      'CREATE INDEX accounts_by_name ON accounts (name)',
    ],
    table: 'accounts',
    columns: { id: 'id', name: 'name', balance: 'balance' },
  },
} as const;

for (const [dialect, { label, ddl, table, columns }] of Object.entries(ACCOUNTS)) {
  mutationSinkContract(`Spanner emulator, ${label}`, async () => {
    const t = await createTestDatabase(emu, dialect as keyof typeof ACCOUNTS, [...ddl]);
    open.push(t);
    return {
      sink: new SpannerMutationSink(t.database),
      catalog: new SpannerWriterCatalog(t.database),
      table,
      columns,
    };
  });
}

/*
 * Every column type at its extremes through the writer's typing and `SpannerMutationSink` into the emulator,
 * both dialects, read back in wire form: what the producer sent is what Spanner holds, exactly (the sink builds
 * the request's values itself, so a number typed as a float must reach a FLOAT64 / FLOAT32 column as that
 * float, "NaN" and the infinities as the strings Spanner reads, INT64 beyond 2^53 to the digit).
 */
const DDL: Record<Dialect, string[]> = {
  GOOGLE_STANDARD_SQL: [
    `CREATE TABLE Every (Id INT64 NOT NULL, I INT64, F FLOAT64, F32 FLOAT32, N NUMERIC, B BOOL, S STRING(MAX),
     Y BYTES(MAX), D DATE, T TIMESTAMP, J JSON, AI ARRAY<INT64>, AF ARRAY<FLOAT64>, AS ARRAY<STRING(MAX)>)
     PRIMARY KEY (Id)`,
  ],
  POSTGRESQL: [
    `CREATE TABLE every (id bigint NOT NULL PRIMARY KEY, i bigint, f float8, f32 float4, n numeric, b bool,
     s text, y bytea, d date, t timestamptz, j jsonb, ai bigint[], af float8[], "as" text[])`,
  ],
};

/** Rows by id, the producer's JSON values: extremes, non-finite floats, nulls, arrays with nulls. */
const ROWS: Array<Record<string, unknown>> = [
  {
    Id: '1',
    I: '9223372036854775807',
    F: 1.7976931348623157e308,
    F32: 3.4028234663852886e38,
    N: '99999999999999999999999999999.999999999',
    B: true,
    S: 'ünïcödé 𝄞 "quoted"',
    Y: 'AP8=',
    D: '9999-12-31',
    T: '9999-12-31T23:59:59.999999999Z',
    J: { a: [1, 'two', null], b: { c: true } },
    AI: ['-9223372036854775808', null, '0'],
    AF: [0.5, 'NaN', 'Infinity', '-Infinity', null],
    AS: ['', null, 'x'],
  },
  {
    Id: '-9223372036854775808',
    I: -9007199254740991,
    F: 'NaN',
    F32: '-Infinity',
    N: '-0.000000001',
    B: false,
    S: '',
    Y: '',
    D: '0001-01-01',
    T: '0001-01-01T00:00:00Z',
    J: 'a string',
    AI: [],
    AF: [],
    AS: [],
  },
  { Id: '0', I: null, F: 5e-324, F32: 1.5, N: '0', B: null, S: null, Y: null, D: null, T: null, J: null },
];

/** What Spanner holds for each producer value, in wire form (the column order of ROWS). */
const HELD: unknown[][] = [
  [
    '1',
    '9223372036854775807',
    1.7976931348623157e308,
    3.4028234663852886e38,
    '99999999999999999999999999999.999999999',
    true,
    'ünïcödé 𝄞 "quoted"',
    'AP8=',
    '9999-12-31',
    '9999-12-31T23:59:59.999999999Z',
    '{"a":[1,"two",null],"b":{"c":true}}',
    ['-9223372036854775808', null, '0'],
    [0.5, 'NaN', 'Infinity', '-Infinity', null],
    ['', null, 'x'],
  ],
  [
    '-9223372036854775808',
    '-9007199254740991',
    'NaN',
    '-Infinity',
    '-0.000000001',
    false,
    '',
    '',
    '0001-01-01',
    '0001-01-01T00:00:00Z',
    '"a string"',
    [],
    [],
    [],
  ],
  ['0', null, 5e-324, 1.5, '0', null, null, null, null, null, null, null, null, null],
];

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  'every type through the mutation sink, %s',
  (dialect) => {
    it('holds exactly what the producer sent', async () => {
      const t = await createTestDatabase(emu, dialect, DDL[dialect]);
      open.push(t);
      const pg = dialect === 'POSTGRESQL';
      const name = (c: string) => (pg ? c.toLowerCase() : c);
      const rows = ROWS.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [name(k), v])));
      const body = { mutations: rows.map((row) => ({ op: 'insert', table: name('Every'), row })) };
      const parsed = parseWriteRequest(body, 100);
      if (!parsed.ok) throw new Error(parsed.problems.join('; '));
      const catalog = await new SpannerWriterCatalog(t.database).read();
      const typed = typeMutations(catalog, parsed.value.mutations);
      if (!typed.ok) throw new Error(typed.problems.join('; '));

      const result = await new SpannerMutationSink(t.database).batchWrite(typed.value, { timeoutMs: 20_000 });
      expect(result.callError).toBeUndefined();
      expect(result.reports.map((r) => r.status.code)).toEqual([0, 0, 0]);

      const columns = Object.keys(ROWS[0]!).map(name);
      const quoted = columns.map((c) => (pg ? `"${c}"` : `\`${c}\``)).join(', ');
      const read = await wireQuery(t.database, { sql: `SELECT ${quoted} FROM ${name('Every')}` });
      // A TIMESTAMP is compared as an instant (Spanner may spell the fraction with fewer digits), JSONB by value.
      const instant = (v: unknown) => (typeof v === 'string' ? formatTimestamp(parseTimestamp(v)) : v);
      const json = (v: unknown) => (typeof v === 'string' ? JSON.stringify(JSON.parse(v)) : v);
      const normal = (r: unknown[]) => r.map((v, i) => (i === 9 ? instant(v) : i === 10 ? json(v) : v));
      const byId = new Map<unknown, unknown[]>(read.rows.map((r) => [r[0], normal(r)]));
      const held = HELD.map(normal);
      for (const h of held) expect(byId.get(h[0])).toEqual(h);
    });

    it('deletes by a key beyond 2^53', async () => {
      const t = await createTestDatabase(emu, dialect, DDL[dialect]);
      open.push(t);
      const table = dialect === 'POSTGRESQL' ? 'every' : 'Every';
      const id = dialect === 'POSTGRESQL' ? 'id' : 'Id';
      const catalog = await new SpannerWriterCatalog(t.database).read();
      const sink = new SpannerMutationSink(t.database);
      const send = async (mutations: unknown[]) => {
        const parsed = parseWriteRequest({ mutations }, 100);
        if (!parsed.ok) throw new Error(parsed.problems.join('; '));
        const typed = typeMutations(catalog, parsed.value.mutations);
        if (!typed.ok) throw new Error(typed.problems.join('; '));
        return sink.batchWrite(typed.value, { timeoutMs: 20_000 });
      };
      await send(
        ['9007199254740993', '9007199254740994'].map((k) => ({ op: 'insert', table, row: { [id]: k } })),
      );
      const deleted = await send([{ op: 'delete', table, key: ['9007199254740993'] }]);
      expect(deleted.reports.map((r) => r.status.code)).toEqual([0]);
      const read = await wireQuery(t.database, { sql: `SELECT ${id} FROM ${table}` });
      expect(read.rows).toEqual([['9007199254740994']]);
    });
  },
);
