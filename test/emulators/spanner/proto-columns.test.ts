/**
 * PROTO and ENUM columns through the official client (GoogleSQL): proto bundles created, altered and dropped
 * from a FileDescriptorSet sent as `protoDescriptors`, GetDatabaseDdl giving both back, values written as
 * `Spanner.protoMessage` / `Spanner.protoEnum`, bytes and numbers, read and queried back with their types,
 * INFORMATION_SCHEMA, change records, type changes to BYTES / INT64, and the service's errors; PostgreSQL
 * refuses proto bundles.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Spanner } from '@google-cloud/spanner';
import * as protobuf from 'protobufjs';
import { FileDescriptorSet } from 'protobufjs/ext/descriptor';
import {
  createTestDatabase,
  emulatorClient,
  type TestDatabase,
} from '../../../local/emulators/spanner/client';
import { type RunningSpannerEmulator, startSpannerEmulator } from '../../../local/emulators/spanner/server';
import { walkDag } from './change-streams/client-read';

/** A small schema of our own; `version` 2 adds a field, as a schema evolution would. */
function protoText(version: 1 | 2): string {
  return `syntax = "proto3";
package sluice.test.music;
enum Genre { GENRE_UNSPECIFIED = 0; POP = 1; JAZZ = 2; ROCK = 3; }
message Singer {
  int64 singer_id = 1;
  string name = 2;
  Genre genre = 3;
  ${version === 2 ? 'string nationality = 4;' : ''}
  message Award { string title = 1; }
  repeated Award awards = 5;
}`;
}

function build(version: 1 | 2): { root: protobuf.Root; descriptors: Buffer } {
  const root = protobuf.parse(protoText(version), { keepCase: true }).root;
  const set = (root as unknown as { toDescriptor(syntax: string): protobuf.Message }).toDescriptor('proto3');
  const files = (set as unknown as { file: Array<{ name?: string }> }).file;
  for (const f of files) f.name = 'music.proto';
  return { root, descriptors: Buffer.from(FileDescriptorSet.encode(set).finish()) };
}

const V1 = build(1);
const V2 = build(2);
const Singer = V1.root.lookupType('sluice.test.music.Singer');
const GenreEnum = V1.root.lookupEnum('sluice.test.music.Genre');
/** The enum object protobufjs-cli generates (names own, numbers → names on its prototype), as the client expects. */
const Genre = Object.assign(Object.create(GenreEnum.valuesById) as object, GenreEnum.values);
const MSG = 'sluice.test.music.Singer';
const ENUM = 'sluice.test.music.Genre';
const BUNDLE = `CREATE PROTO BUNDLE (${MSG}, ${ENUM}, sluice.test.music.Singer.Award,)`;
const TABLE = `CREATE TABLE Singers (
  Id INT64 NOT NULL,
  Info ${MSG},
  Kind ${ENUM},
  Infos ARRAY<\`${MSG}\`>,
  Kinds ARRAY<${ENUM}>,
) PRIMARY KEY (Id)`;

let emu: RunningSpannerEmulator;
let g: TestDatabase;

async function ddl(db: TestDatabase, statements: string[], protoDescriptors?: Buffer): Promise<void> {
  const [op] = await db.database.updateSchema({
    statements,
    ...(protoDescriptors ? { protoDescriptors } : {}),
  });
  await op.promise();
}

beforeAll(async () => {
  emu = await startSpannerEmulator({ port: 0, churnMs: 0 });
  g = await createTestDatabase(emu, 'GOOGLE_STANDARD_SQL');
  await ddl(g, [BUNDLE, TABLE, 'CREATE CHANGE STREAM S FOR Singers'], V1.descriptors);
}, 60_000);

afterAll(async () => {
  await g?.close();
  await emu?.stop();
});

const ada = Singer.encode(
  Singer.create({ singer_id: 7, name: 'Ada', genre: 2, awards: [{ title: 'x' }] }),
).finish();
const bob = Singer.encode(Singer.create({ name: 'Bob' })).finish();
interface Cell {
  name: string;
  value: unknown;
}
/** The serialized bytes of a ProtoMessage cell (null for NULL). */
const bytesOf = (cell: unknown) => (cell === null ? null : Buffer.from((cell as { value: Buffer }).value));
const message = (value: Uint8Array) => Spanner.protoMessage({ value: Buffer.from(value), fullName: MSG });
const genre = (value: number) => Spanner.protoEnum({ value, fullName: ENUM });

test('GetDatabaseDdl gives back the bundle, the columns by type name, and the descriptors', async () => {
  const [statements] = await g.database.getSchema();
  expect(statements[0]).toBe(
    `CREATE PROTO BUNDLE (\n  ${ENUM},\n  ${MSG},\n  sluice.test.music.Singer.Award,\n)`,
  );
  expect(statements[1]).toContain(`Info ${MSG},`);
  expect(statements[1]).toContain(`Kinds ARRAY<${ENUM}>,`);
  const [ddlResponse] = await g.spanner.getDatabaseAdminClient().getDatabaseDdl({ database: g.name });
  const back = FileDescriptorSet.decode(ddlResponse.protoDescriptors as Uint8Array) as unknown as {
    file: Array<{ name: string; package: string }>;
  };
  expect(back.file.map((f) => [f.name, f.package])).toEqual([['music.proto', 'sluice.test.music']]);
});

test('protoMessage / protoEnum values, bytes and numbers, NULLs and arrays are written and read back exactly', async () => {
  await g.database.table('Singers').insert([
    {
      Id: 1,
      Info: message(ada),
      Kind: genre(2),
      Infos: [message(ada), null, message(bob)],
      Kinds: [genre(1), null],
    },
    { Id: 2, Info: Buffer.from(bob), Kind: '3', Infos: [], Kinds: [] },
    { Id: 3, Info: null, Kind: null, Infos: null, Kinds: null },
  ]);
  const [rows] = await g.database.table('Singers').read({
    keys: [1, 2, 3],
    columns: ['Id', 'Info', 'Kind', 'Infos', 'Kinds'],
    columnsMetadata: { Info: Singer, Kind: Genre },
  } as never);
  const json = rows.map((r) => r.toJSON());
  expect(json[0]).toMatchObject({ Kind: 'JAZZ', Infos: [expect.anything(), null, expect.anything()] });
  expect(json[0]?.Info).toMatchObject({ singer_id: expect.anything(), name: 'Ada', genre: 2 });
  const [raw] = await g.database.run({ sql: 'SELECT Id, Info, Kind, Infos, Kinds FROM Singers ORDER BY Id' });
  const value = (row: unknown, name: string) => (row as Cell[]).find((c) => c.name === name)?.value;
  expect(bytesOf(value(raw[0], 'Info'))).toEqual(Buffer.from(ada));
  expect(value(raw[0], 'Kind')).toMatchObject({ value: '2', fullName: ENUM });
  expect((value(raw[0], 'Infos') as unknown[]).map(bytesOf)).toEqual([
    Buffer.from(ada),
    null,
    Buffer.from(bob),
  ]);
  expect((value(raw[0], 'Kinds') as Array<{ value: string } | null>).map((k) => k?.value ?? null)).toEqual([
    '1',
    null,
  ]);
  expect(bytesOf(value(raw[1], 'Info'))).toEqual(Buffer.from(bob));
  expect(value(raw[1], 'Kind')).toMatchObject({ value: '3' });
  expect(value(raw[1], 'Infos')).toEqual([]);
  expect(raw[2]?.toJSON()).toEqual({ Id: 3, Info: null, Kind: null, Infos: null, Kinds: null });
});

test('result metadata types the columns PROTO / ENUM with their names, and typed parameters match', async () => {
  await g.database.table('Singers').upsert({ Id: 10, Info: message(ada), Kind: genre(1) });
  const [rows, , meta] = (await g.database.run({
    sql: 'SELECT Id, Info, Kinds FROM Singers WHERE Kind = @k AND Id = 10',
    params: { k: genre(1) },
  } as never)) as unknown as [
    unknown[],
    unknown,
    { rowType: { fields: Array<{ name: string; type: unknown }> } },
  ];
  expect(rows).toHaveLength(1);
  expect(meta.rowType.fields.map((f) => f.type)).toEqual([
    expect.objectContaining({ code: 'INT64' }),
    expect.objectContaining({ code: 'PROTO', protoTypeFqn: MSG }),
    expect.objectContaining({
      code: 'ARRAY',
      arrayElementType: expect.objectContaining({ code: 'ENUM', protoTypeFqn: ENUM }),
    }),
  ]);
  const [echo] = await g.database.run({
    sql: 'SELECT @m AS m, @e AS e',
    params: { m: message(bob), e: genre(3) },
  });
  expect(bytesOf((echo[0] as unknown as Cell[])[0]?.value)).toEqual(Buffer.from(bob));
  expect((echo[0] as unknown as Cell[])[1]?.value).toMatchObject({ value: '3', fullName: ENUM });
});

test('INFORMATION_SCHEMA spells the types PROTO<…> and ENUM<…>', async () => {
  const [rows] = await g.database.run({
    sql: "SELECT COLUMN_NAME, SPANNER_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'Singers' ORDER BY ORDINAL_POSITION",
    json: true,
  });
  expect(rows.map((r) => Object.values(r as Record<string, string>))).toEqual([
    ['Id', 'INT64'],
    ['Info', `PROTO<${MSG}>`],
    ['Kind', `ENUM<${ENUM}>`],
    ['Infos', `ARRAY<PROTO<${MSG}>>`],
    ['Kinds', `ARRAY<ENUM<${ENUM}>>`],
  ]);
});

test('change records carry the types with proto_type_fqn, PROTO values as base64 and ENUM values as numbers in text', async () => {
  const start = emu.admin.nowNs();
  await g.database
    .table('Singers')
    .insert({ Id: 20, Info: message(ada), Kind: genre(3), Infos: [message(bob)], Kinds: [genre(2)] });
  const walk = await walkDag(g.database, 'GOOGLE_STANDARD_SQL', 'S', start, emu.admin.nowNs());
  const [insert] = walk.data;
  expect(insert?.columnTypes.map((c) => [c.name, c.type])).toEqual([
    ['Id', { code: 'INT64' }],
    ['Info', { code: 'PROTO', protoTypeFqn: MSG }],
    ['Kind', { code: 'ENUM', protoTypeFqn: ENUM }],
    ['Infos', { code: 'ARRAY', arrayElementType: { code: 'PROTO', protoTypeFqn: MSG } }],
    ['Kinds', { code: 'ARRAY', arrayElementType: { code: 'ENUM', protoTypeFqn: ENUM } }],
  ]);
  expect(insert?.mods[0]?.newValues).toEqual({
    Info: Buffer.from(ada).toString('base64'),
    Kind: '3',
    Infos: [Buffer.from(bob).toString('base64')],
    Kinds: ['2'],
  });
});

test('ALTER PROTO BUNDLE UPDATE takes a new version of a message; a removed type still in use is refused', async () => {
  await ddl(g, [`ALTER PROTO BUNDLE UPDATE (${MSG})`], V2.descriptors);
  const [rows] = await g.database.run({ sql: 'SELECT Info FROM Singers WHERE Id = 1' });
  expect(bytesOf((rows[0] as unknown as Cell[])[0]?.value)).toEqual(Buffer.from(ada));
  await expect(ddl(g, [`ALTER PROTO BUNDLE DELETE (${ENUM})`], V2.descriptors)).rejects.toMatchObject({
    code: 9,
    message: expect.stringContaining(`Removed type ${ENUM} is still being used by column Kind`),
  });
  await expect(ddl(g, ['DROP PROTO BUNDLE'])).rejects.toMatchObject({ code: 9 });
});

test('the service errors: unknown types, a bundle without descriptors, a second insert', async () => {
  await expect(
    ddl(g, ['CREATE TABLE Bad (Id INT64, X sluice.test.music.Nope) PRIMARY KEY (Id)']),
  ).rejects.toMatchObject({
    code: 5,
    message: expect.stringContaining('Type not found: `sluice.test.music.Nope`'),
  });
  await expect(
    ddl(g, ['ALTER PROTO BUNDLE INSERT (sluice.test.music.Nope)'], V2.descriptors),
  ).rejects.toMatchObject({
    code: 5,
    message: expect.stringContaining('Missing descriptor for `sluice.test.music.Nope`'),
  });
  await expect(ddl(g, [`ALTER PROTO BUNDLE INSERT (${MSG})`], V2.descriptors)).rejects.toMatchObject({
    code: 6,
  });
  await expect(
    ddl(g, [`ALTER PROTO BUNDLE UPDATE (${MSG})`], Buffer.from('not a descriptor set')),
  ).rejects.toMatchObject({
    code: 3,
    message: expect.stringContaining('Could not parse contents of proto_descriptor_file'),
  });
  await expect(ddl(g, [`ALTER PROTO BUNDLE UPDATE (${MSG})`])).rejects.toMatchObject({
    code: 3,
    message: expect.stringContaining('proto_descriptor_file cannot be empty'),
  });
  await expect(g.database.table('Singers').insert({ Id: 30, Kind: '4294967296' })).rejects.toMatchObject({
    code: 9,
    message: expect.stringContaining('Could not parse 4294967296 as an integer'),
  });
});

test('a PROTO column becomes BYTES and an ENUM column INT64 (and back), values kept', async () => {
  const db = await createTestDatabase(emu, 'GOOGLE_STANDARD_SQL');
  try {
    await ddl(
      db,
      [BUNDLE, `CREATE TABLE T (Id INT64 NOT NULL, P ${MSG}, E ${ENUM}) PRIMARY KEY (Id)`],
      V1.descriptors,
    );
    await db.database.table('T').insert({ Id: 1, P: message(ada), E: genre(2) });
    await ddl(db, ['ALTER TABLE T ALTER COLUMN P BYTES(MAX)', 'ALTER TABLE T ALTER COLUMN E INT64']);
    const [rows] = await db.database.run({ sql: 'SELECT P, E FROM T', json: true });
    expect(rows).toEqual([{ P: Buffer.from(ada), E: 2 }]);
    await ddl(db, [`ALTER TABLE T ALTER COLUMN P ${MSG}`, `ALTER TABLE T ALTER COLUMN E ${ENUM}`]);
    await expect(ddl(db, ['ALTER TABLE T ALTER COLUMN P STRING(MAX)'])).rejects.toMatchObject({ code: 3 });
    await ddl(db, ['DROP TABLE T', 'DROP PROTO BUNDLE']);
    const [statements] = await db.database.getSchema();
    expect(statements).toEqual([]);
  } finally {
    await db.close();
  }
});

test('PostgreSQL has no proto bundles: the statement and descriptors are refused', async () => {
  const pg = await createTestDatabase(emu, 'POSTGRESQL');
  try {
    await expect(ddl(pg, [BUNDLE])).rejects.toMatchObject({
      code: 3,
      message: expect.stringContaining('PROTO'),
    });
    await expect(ddl(pg, ['CREATE TABLE t (id bigint PRIMARY KEY)'], V1.descriptors)).rejects.toMatchObject({
      code: 3,
      message: expect.stringContaining('PostgreSQL'),
    });
  } finally {
    await pg.close();
  }
});

test('a CAST to an enum or message type is refused loudly, not answered wrongly', async () => {
  for (const sql of [
    `SELECT CAST(1 AS ${ENUM}) AS e`,
    `SELECT CAST('POP' AS ${ENUM}) AS e`,
    `SELECT CAST(b'' AS ${MSG}) AS m`,
  ]) {
    await expect(g.database.run({ sql })).rejects.toMatchObject({
      code: 12,
      message: expect.stringContaining('Proto and enum types in SQL expressions'),
    });
  }
  await expect(g.database.run({ sql: 'SELECT Id FROM Singers WHERE Info = Info' })).rejects.toMatchObject({
    code: 3,
    message: expect.stringContaining(`Equality is not defined for arguments of type ${MSG}`),
  });
});

test('the bundle, its descriptors and PROTO / ENUM rows survive a restart of an emulator with a data directory', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'spanner-protos-'));
  try {
    const first = await startSpannerEmulator({ port: 0, churnMs: 0, dataDir });
    const db = await createTestDatabase(first, 'GOOGLE_STANDARD_SQL');
    await ddl(db, [BUNDLE, TABLE], V1.descriptors);
    await ddl(db, [`ALTER PROTO BUNDLE UPDATE (${MSG})`], V2.descriptors);
    await db.database
      .table('Singers')
      .insert({ Id: 1, Info: message(ada), Kind: genre(2), Kinds: [genre(1)] });
    const [ddlBefore] = await db.database.getSchema();
    const [instanceId, databaseId] = [db.instance.formattedName_.split('/').pop(), db.name.split('/').pop()];
    await db.close();
    await first.stop();
    const again = await startSpannerEmulator({ port: 0, churnMs: 0, dataDir });
    const client = emulatorClient(again);
    const database = client.instance(instanceId as string).database(databaseId as string);
    try {
      expect((await database.getSchema())[0]).toEqual(ddlBefore);
      const [rows] = await database.run({ sql: 'SELECT Info, Kind FROM Singers' });
      const cells = rows[0] as unknown as Cell[];
      expect(bytesOf(cells[0]?.value)).toEqual(Buffer.from(ada));
      expect(cells[1]?.value).toMatchObject({ value: '2' });
      await ddl(
        { database } as TestDatabase,
        [`ALTER PROTO BUNDLE DELETE (sluice.test.music.Singer.Award)`],
        V2.descriptors,
      );
    } finally {
      await database.close();
      client.close();
      await again.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 60_000);

test('DML writes PROTO / ENUM columns from typed parameters, and ENUM orders by number', async () => {
  await g.database.runTransactionAsync(async (tx) => {
    await tx.runUpdate({
      sql: 'INSERT INTO Singers (Id, Info, Kind, Kinds) VALUES (@id, @m, @k, @ks)',
      params: { id: 40, m: message(bob), k: genre(3), ks: [genre(2), genre(1)] },
    } as never);
    await tx.runUpdate({
      sql: 'INSERT INTO Singers (Id, Kind) VALUES (41, @k)',
      params: { k: genre(1) },
    } as never);
    await tx.runUpdate({
      sql: 'UPDATE Singers SET Kind = @k WHERE Id = 41',
      params: { k: genre(2) },
    } as never);
    await tx.commit();
  });
  const [rows] = await g.database.run({
    sql: 'SELECT Id, Info, Kind FROM Singers WHERE Id IN (40, 41) ORDER BY Kind',
  });
  const cells = rows.map((r) => r as unknown as Cell[]);
  expect(cells.map((c) => [c[0]?.value, (c[2]?.value as { value: string } | undefined)?.value])).toEqual([
    [expect.objectContaining({ value: '41' }), '2'],
    [expect.objectContaining({ value: '40' }), '3'],
  ]);
  expect(bytesOf(cells[1]?.[1]?.value)).toEqual(Buffer.from(bob));
});

test('GetDatabaseDdl round-trips: its statements and descriptors create the same schema in a new database', async () => {
  const admin = g.spanner.getDatabaseAdminClient();
  const [source] = await admin.getDatabaseDdl({ database: g.name });
  const copy = await createTestDatabase(emu, 'GOOGLE_STANDARD_SQL');
  try {
    await ddl(
      copy,
      (source.statements ?? []).filter((s) => !s.startsWith('CREATE CHANGE STREAM')),
      Buffer.from(source.protoDescriptors as Uint8Array),
    );
    const [again] = await admin.getDatabaseDdl({ database: copy.name });
    expect(again.statements).toEqual(
      (source.statements ?? []).filter((s) => !s.startsWith('CREATE CHANGE STREAM')),
    );
    expect(Buffer.from(again.protoDescriptors as Uint8Array)).toEqual(
      Buffer.from(source.protoDescriptors as Uint8Array),
    );
  } finally {
    await copy.close();
  }
});
