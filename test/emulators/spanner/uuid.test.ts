/**
 * UUID columns and parameters through the official client: GoogleSQL `UUID` / `ARRAY<UUID>` and PostgreSQL
 * `uuid` / `uuid[]`, as keys and values, in mutations, queries, INFORMATION_SCHEMA and change records; keys
 * ordered by value, STRING parameters and literals coerced where a UUID is needed, casts, and the type errors
 * the service gives.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { TestDatabase } from '../../../local/emulators/spanner/client';
import type { Dialect } from '../../../shared/domain/change-record';
import { walkDag } from './change-streams/client-read';
import { dialectDatabases } from './support/dialect-databases';

const A = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
const B = '00000000-0000-4000-8000-000000000000';
const C = 'ffffffff-ffff-4fff-bfff-ffffffffffff';
const D = '0b8c5e6a-3f1d-4c2e-9a7b-1d2e3f4a5b6c';
const E = 'f47ac10b-58cc-4372-a567-0e02b2c3d479';

const t = dialectDatabases({
  GOOGLE_STANDARD_SQL: [
    'CREATE TABLE U (Id UUID NOT NULL, Other UUID, Many ARRAY<UUID>, Name STRING(MAX)) PRIMARY KEY (Id)',
    'CREATE CHANGE STREAM S FOR U',
    'CREATE TABLE V (Id UUID NOT NULL, Tag STRING(MAX), Many ARRAY<UUID>) PRIMARY KEY (Id)',
  ],
  POSTGRESQL: [
    'CREATE TABLE u (id uuid NOT NULL PRIMARY KEY, other uuid, many uuid[], name varchar)',
    'CREATE CHANGE STREAM s FOR u',
  ],
});

const n = (dialect: Dialect) =>
  dialect === 'POSTGRESQL'
    ? { db: () => t.pg, t: 'u', s: 's', id: 'id', other: 'other', many: 'many', name: 'name', p: '$1' }
    : { db: () => t.g, t: 'U', s: 'S', id: 'Id', other: 'Other', many: 'Many', name: 'Name', p: '@p1' };

test.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  '%s: UUID keys, values and arrays are stored canonically and read back as text',
  async (dialect) => {
    const x = n(dialect);
    const db = x.db().database;
    await db.table(x.t).insert([
      {
        [x.id]: A.toUpperCase(),
        [x.other]: `{${B}}`,
        [x.many]: [C, null, A.replace(/-/g, '')],
        [x.name]: 'a',
      },
      { [x.id]: C, [x.other]: null, [x.many]: [], [x.name]: 'c' },
    ]);
    const [rows] = await db.run({ sql: `SELECT * FROM ${x.t} ORDER BY ${x.id}`, json: true });
    expect(rows).toEqual([
      { [x.id]: A, [x.other]: B, [x.many]: [C, null, A], [x.name]: 'a' },
      { [x.id]: C, [x.other]: null, [x.many]: [], [x.name]: 'c' },
    ]);
    const [typed] = await db.run({
      sql: `SELECT ${x.name} FROM ${x.t} WHERE ${x.id} = ${x.p}`,
      params: { p1: A },
      types: { p1: 'uuid' },
      json: true,
    });
    expect(typed).toEqual([{ [x.name]: 'a' }]);
  },
);

test('the result metadata types UUID columns as UUID, and a STRING parameter matches a UUID column', async () => {
  const db = t.g.database;
  await db.table('U').insert({ Id: B, Name: 'b' });
  const fields = await new Promise<
    Array<{ name: string; type: { code: string; arrayElementType?: { code: string } } }>
  >((resolve, reject) => {
    db.runStream({ sql: 'SELECT Id, Many FROM U WHERE Id = @v', params: { v: B } })
      .on('response', (r: { metadata?: { rowType?: { fields?: never[] } } }) => {
        if (r.metadata?.rowType?.fields) resolve(r.metadata.rowType.fields);
      })
      .on('error', reject)
      .resume();
  });
  expect(fields.map((f) => [f.name, f.type.code, f.type.arrayElementType?.code])).toEqual([
    ['Id', 'UUID', undefined],
    ['Many', 'ARRAY', 'UUID'],
  ]);
  const [typed] = await db.run({ sql: 'SELECT @v AS v', params: { v: A }, types: { v: 'uuid' }, json: true });
  expect(typed).toEqual([{ v: A }]);
});

test.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  '%s: INFORMATION_SCHEMA names the type, and a malformed UUID fails with FAILED_PRECONDITION',
  async (dialect) => {
    const x = n(dialect);
    const db = x.db().database;
    const sql =
      dialect === 'POSTGRESQL'
        ? "SELECT column_name, spanner_type FROM information_schema.columns WHERE table_name = 'u' ORDER BY ordinal_position"
        : "SELECT COLUMN_NAME, SPANNER_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'U' ORDER BY ORDINAL_POSITION";
    const [rows] = await db.run({ sql, json: true });
    const types = rows.map((r) => Object.values(r as Record<string, string>));
    expect(types).toEqual(
      dialect === 'POSTGRESQL'
        ? [
            ['id', 'uuid'],
            ['other', 'uuid'],
            ['many', 'uuid[]'],
            ['name', 'character varying'],
          ]
        : [
            ['Id', 'UUID'],
            ['Other', 'UUID'],
            ['Many', 'ARRAY<UUID>'],
            ['Name', 'STRING(MAX)'],
          ],
    );
    for (const bad of ['not-a-uuid', `${A}0`, `-${A}`, `{${A}`, `${A.slice(0, 8)}--${A.slice(9)}`]) {
      await expect(db.table(x.t).insert({ [x.id]: bad })).rejects.toMatchObject({
        code: 9,
        message: expect.stringContaining(`Could not parse ${bad} as a UUID`),
      });
    }
  },
);

test.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  '%s: change records carry UUID keys and values as text with the UUID type',
  async (dialect) => {
    const x = n(dialect);
    const db = x.db().database;
    const start = t.emu.admin.nowNs();
    const id = '12345678-9abc-4def-8123-456789abcdef';
    await db.table(x.t).insert({ [x.id]: id.toUpperCase(), [x.other]: A, [x.many]: [B] });
    await db.table(x.t).deleteRows([id]);
    const walk = await walkDag(db, dialect, x.s, start, t.emu.admin.nowNs());
    const [insert, remove] = walk.data;
    expect(insert?.columnTypes.map((c) => [c.name, c.type])).toEqual([
      [x.id, { code: 'UUID' }],
      [x.other, { code: 'UUID' }],
      [x.many, { code: 'ARRAY', arrayElementType: { code: 'UUID' } }],
      [x.name, { code: 'STRING' }],
    ]);
    expect(insert?.mods[0]).toMatchObject({
      keys: { [x.id]: id },
      newValues: { [x.other]: A, [x.many]: [B] },
    });
    expect(remove?.modType).toBe('DELETE');
    expect(remove?.mods[0]?.keys).toEqual({ [x.id]: id });
  },
);

type Rows = Array<Record<string, unknown>>;

async function json(db: TestDatabase, q: object): Promise<Rows> {
  const [rows] = await db.database.run({ ...q, json: true } as never);
  return rows as unknown as Rows;
}

test('UUID keys order by value and are read back by key', async () => {
  await t.g.database.table('V').insert([
    { Id: E.toUpperCase(), Tag: 'e', Many: [D, null] },
    { Id: `{${D}}`, Tag: 'd', Many: [] },
  ]);
  expect(await json(t.g, { sql: 'SELECT Id, Tag, Many FROM V ORDER BY Id' })).toEqual([
    { Id: D, Tag: 'd', Many: [] },
    { Id: E, Tag: 'e', Many: [D, null] },
  ]);
  const [read] = await t.g.database.table('V').read({ keys: [D], columns: ['Tag'], json: true });
  expect(read).toEqual([{ Tag: 'd' }]);
});

test('typed UUID array parameters, STRING literals where a UUID is needed, and casts to STRING and BYTES', async () => {
  const [, , meta] = (await t.g.database.run({
    sql: 'SELECT @v AS v',
    params: { v: [D, E] },
    types: { v: { type: 'array', child: 'uuid' } },
  } as never)) as unknown as [unknown, unknown, { rowType: { fields: Array<{ type: unknown }> } }];
  expect(meta.rowType.fields[0]?.type).toMatchObject({ code: 'ARRAY', arrayElementType: { code: 'UUID' } });
  expect(await json(t.g, { sql: 'SELECT Tag FROM V WHERE Id = @v', params: { v: E } })).toEqual([
    { Tag: 'e' },
  ]);
  expect(await json(t.g, { sql: `SELECT Tag FROM V WHERE Id = '${D.toUpperCase()}'` })).toEqual([
    { Tag: 'd' },
  ]);
  expect(
    await json(t.g, {
      sql: 'SELECT CAST(Id AS STRING) AS s, CAST(Id AS BYTES) AS b FROM V WHERE Id = CAST(@v AS UUID)',
      params: { v: D },
    }),
  ).toEqual([{ s: D, b: Buffer.from(D.replaceAll('-', ''), 'hex') }]);
});

test('a UUID compared with an INT64 or a STRING column is refused, not an empty result', async () => {
  await expect(json(t.g, { sql: 'SELECT 1 FROM V WHERE Id = 1' })).rejects.toThrow(
    /No matching signature for operator =/,
  );
  await expect(json(t.g, { sql: 'SELECT 1 FROM V WHERE Id = Tag' })).rejects.toThrow(
    /No matching signature for operator =/,
  );
  await expect(json(t.g, { sql: 'SELECT 1 FROM V WHERE Id = @v', params: { v: 'nope' } })).rejects.toThrow(
    /nope/,
  );
});
