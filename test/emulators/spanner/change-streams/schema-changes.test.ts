/**
 * Schema changes while change streams run, through the official client, in both dialects: records after
 * ADD / DROP / ALTER COLUMN carry the new `column_types`; reads (and INFORMATION_SCHEMA) at a timestamp see
 * the schema of that timestamp; a table or column a stream lists explicitly cannot be dropped; ALTER COLUMN
 * checks the stored values; a table created later joins a FOR ALL stream.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { PreciseDate } from '@google-cloud/precise-date';
import type { Database } from '@google-cloud/spanner';
import type { DataChangeRecord, Dialect } from '../../../../shared/domain/change-record';
import { applyDdl, dialectDatabases, dialectName } from '../support/dialect-databases';
import { walkDag } from './client-read';

const DDL: Record<Dialect, string[]> = {
  GOOGLE_STANDARD_SQL: [
    'CREATE TABLE Singers (Id INT64 NOT NULL, Name STRING(10), Nick STRING(MAX)) PRIMARY KEY (Id)',
    'CREATE TABLE Listed (Id INT64 NOT NULL, Kept STRING(MAX), Other STRING(MAX)) PRIMARY KEY (Id)',
    "CREATE CHANGE STREAM Everything FOR ALL OPTIONS (value_capture_type = 'NEW_ROW')",
    'CREATE CHANGE STREAM Explicit FOR Listed(Kept)',
  ],
  POSTGRESQL: [
    'CREATE TABLE singers (id bigint NOT NULL PRIMARY KEY, name varchar(10), nick varchar)',
    'CREATE TABLE listed (id bigint NOT NULL PRIMARY KEY, kept varchar, other varchar)',
    "CREATE CHANGE STREAM everything FOR ALL WITH (value_capture_type = 'NEW_ROW')",
    'CREATE CHANGE STREAM explicit FOR listed(kept)',
  ],
};

const t = dialectDatabases(DDL);
const n = dialectName;
const ddl = applyDdl;

function nsOf(resp: { commitTimestamp?: { seconds?: unknown; nanos?: unknown } | null }): bigint {
  const ts = resp.commitTimestamp;
  return BigInt(String(ts?.seconds ?? 0)) * 1_000_000_000n + BigInt(Number(ts?.nanos ?? 0));
}

async function upsert(db: Database, table: string, row: Record<string, unknown>): Promise<bigint> {
  const [resp] = await db.table(table).upsert(row);
  return nsOf(resp as never);
}

async function records(db: Database, dialect: Dialect, stream: string, from: bigint) {
  const walk = await walkDag(db, dialect, n(dialect, stream), from, t.emu.admin.nowNs());
  // Partitions are read one after another: commit order is the records' timestamp order.
  return walk.data.sort((a, b) => (a.commitTimestamp < b.commitTimestamp ? -1 : 1));
}

function columnsOf(r: DataChangeRecord): string[] {
  return r.columnTypes.map((c) => `${c.name}:${c.type.code}`);
}

async function expectCode(p: Promise<unknown>, code: number, text?: RegExp): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e as { code?: number; message?: string },
  );
  expect(err?.code).toBe(code);
  if (text) expect(err?.message).toMatch(text);
}

describe.each(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'] as const)('%s', (dialect) => {
  const db = () => t.db(dialect).database;
  const T = (name: string) => n(dialect, name);

  test('records after ADD, ALTER and DROP COLUMN carry the new column_types', async () => {
    const from = t.emu.admin.nowNs();
    await upsert(db(), T('Singers'), { [T('Id')]: '1', [T('Name')]: 'a' });
    const add =
      dialect === 'POSTGRESQL'
        ? 'ALTER TABLE singers ADD COLUMN rank bigint'
        : 'ALTER TABLE Singers ADD COLUMN Rank INT64';
    await ddl(db(), [add]);
    await upsert(db(), T('Singers'), { [T('Id')]: '2', [T('Name')]: 'b', [T('Rank')]: '7' });
    const widen =
      dialect === 'POSTGRESQL'
        ? 'ALTER TABLE singers ALTER COLUMN nick TYPE bytea'
        : 'ALTER TABLE Singers ALTER COLUMN Nick BYTES(MAX)';
    await ddl(db(), [widen]);
    await upsert(db(), T('Singers'), { [T('Id')]: '3', [T('Nick')]: Buffer.from('x') });
    await ddl(db(), [`ALTER TABLE ${T('Singers')} DROP COLUMN ${T('Rank')}`]);
    await upsert(db(), T('Singers'), { [T('Id')]: '4', [T('Name')]: 'd' });
    const seen = (await records(db(), dialect, 'Everything', from)).filter(
      (r) => r.tableName === T('Singers'),
    );
    expect(seen.map(columnsOf)).toEqual([
      [`${T('Id')}:INT64`, `${T('Name')}:STRING`, `${T('Nick')}:STRING`],
      [`${T('Id')}:INT64`, `${T('Name')}:STRING`, `${T('Nick')}:STRING`, `${T('Rank')}:INT64`],
      [`${T('Id')}:INT64`, `${T('Name')}:STRING`, `${T('Nick')}:BYTES`, `${T('Rank')}:INT64`],
      [`${T('Id')}:INT64`, `${T('Name')}:STRING`, `${T('Nick')}:BYTES`],
    ]);
    expect(seen[1]?.mods[0]?.newValues).toMatchObject({ [T('Rank')]: '7' });
    expect(seen[2]?.mods[0]?.newValues).toMatchObject({ [T('Nick')]: Buffer.from('x').toString('base64') });
  });

  test('reads and INFORMATION_SCHEMA at a timestamp see the schema of that timestamp', async () => {
    const t0 = await upsert(db(), T('Singers'), { [T('Id')]: '10', [T('Name')]: 'ten' });
    const col = dialect === 'POSTGRESQL' ? 'later bigint' : 'Later INT64';
    await ddl(db(), [`ALTER TABLE ${T('Singers')} ADD COLUMN ${col}`]);
    await upsert(db(), T('Singers'), { [T('Id')]: '10', [T('Later')]: '5' });
    await ddl(db(), [`ALTER TABLE ${T('Singers')} DROP COLUMN ${T('Name')}`]);
    const at = (ns: bigint) => ({ readTimestamp: new PreciseDate(ns) });
    const [old] = await db().run(
      { sql: `SELECT * FROM ${T('Singers')} WHERE ${T('Id')} = 10`, json: true },
      at(t0),
    );
    expect(Object.keys(old[0] as object)).toEqual([T('Id'), T('Name'), T('Nick')]);
    expect((old[0] as Record<string, unknown>)[T('Name')]).toBe('ten');
    const [now] = await db().run({ sql: `SELECT * FROM ${T('Singers')} WHERE ${T('Id')} = 10`, json: true });
    expect(Object.keys(now[0] as object)).toEqual([T('Id'), T('Nick'), T('Later')]);
    await expectCode(db().run({ sql: `SELECT ${T('Later')} FROM ${T('Singers')}` }, at(t0)), 3);
    const [rows] = await db()
      .table(T('Singers'))
      .read({ keys: ['10'], columns: [T('Name')] }, at(t0));
    expect((rows[0] as unknown as Array<{ value: unknown }>)[0]?.value).toBe('ten');
    const info =
      dialect === 'POSTGRESQL'
        ? "SELECT column_name FROM information_schema.columns WHERE table_name = 'singers' ORDER BY ordinal_position"
        : "SELECT COLUMN_NAME FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'Singers' ORDER BY ORDINAL_POSITION";
    const [cols] = await db().run({ sql: info, json: true }, at(t0));
    expect(cols.map((r) => Object.values(r as object)[0])).toEqual([T('Id'), T('Name'), T('Nick')]);
    const [current] = await db().run({ sql: info, json: true });
    expect(current.map((r) => Object.values(r as object)[0])).toEqual([T('Id'), T('Nick'), T('Later')]);
    // A column added again under a dropped name starts empty; the old values stay at old timestamps.
    const again = dialect === 'POSTGRESQL' ? 'name bigint' : 'Name INT64';
    await ddl(db(), [`ALTER TABLE ${T('Singers')} ADD COLUMN ${again}`]);
    const [fresh] = await db().run({
      sql: `SELECT ${T('Name')} FROM ${T('Singers')} WHERE ${T('Id')} = 10`,
      json: true,
    });
    expect((fresh[0] as Record<string, unknown>)[T('Name')]).toBeNull();
    const [still] = await db().run(
      { sql: `SELECT ${T('Name')} FROM ${T('Singers')} WHERE ${T('Id')} = 10`, json: true },
      at(t0),
    );
    expect((still[0] as Record<string, unknown>)[T('Name')]).toBe('ten');
  });

  test('a table or column a stream lists explicitly cannot be dropped; FOR ALL does not hold one', async () => {
    await expectCode(
      ddl(db(), [`ALTER TABLE ${T('Listed')} DROP COLUMN ${T('Kept')}`]),
      9,
      /Columns explicitly tracked by a Change Stream cannot be dropped/,
    );
    await expectCode(ddl(db(), [`DROP TABLE ${T('Listed')}`]), 9, /tracked by 1 Change Stream/);
    await ddl(db(), [`ALTER TABLE ${T('Listed')} DROP COLUMN ${T('Other')}`]);
    const table =
      dialect === 'POSTGRESQL'
        ? 'CREATE TABLE gone (id bigint PRIMARY KEY)'
        : 'CREATE TABLE Gone (Id INT64) PRIMARY KEY (Id)';
    await ddl(db(), [table, `DROP TABLE ${T('Gone')}`]);
  });

  test('ALTER COLUMN checks the values it keeps, and refuses other type changes', async () => {
    await upsert(db(), T('Listed'), { [T('Id')]: '1', [T('Kept')]: 'twelve chars' });
    const shrink =
      dialect === 'POSTGRESQL'
        ? 'ALTER TABLE listed ALTER COLUMN kept TYPE varchar(5)'
        : 'ALTER TABLE Listed ALTER COLUMN Kept STRING(5)';
    await expectCode(ddl(db(), [shrink]), 9, /Reducing the length of column .* to 5 is not allowed/);
    const int =
      dialect === 'POSTGRESQL'
        ? 'ALTER TABLE listed ALTER COLUMN kept TYPE bigint'
        : 'ALTER TABLE Listed ALTER COLUMN Kept INT64';
    await expectCode(ddl(db(), [int]), 3, /Cannot change type of column/);
    await upsert(db(), T('Listed'), { [T('Id')]: '2' });
    const notNull =
      dialect === 'POSTGRESQL'
        ? 'ALTER TABLE listed ALTER COLUMN kept SET NOT NULL'
        : 'ALTER TABLE Listed ALTER COLUMN Kept STRING(MAX) NOT NULL';
    await expectCode(ddl(db(), [notNull]), 9, /NOT NULL constraint .* has a NULL value/);
    const grow =
      dialect === 'POSTGRESQL'
        ? 'ALTER TABLE listed ALTER COLUMN kept SET DATA TYPE varchar(100)'
        : 'ALTER TABLE Listed ALTER COLUMN Kept STRING(100)';
    await ddl(db(), [grow]);
    const [text] = await db().getSchema();
    expect(text.join('\n')).toMatch(
      dialect === 'POSTGRESQL' ? /kept character varying\(100\)/ : /Kept STRING\(100\)/,
    );
  });

  test('a table created later joins a FOR ALL stream', async () => {
    const from = t.emu.admin.nowNs();
    const create =
      dialect === 'POSTGRESQL'
        ? 'CREATE TABLE newcomer (id bigint NOT NULL PRIMARY KEY, v varchar)'
        : 'CREATE TABLE Newcomer (Id INT64 NOT NULL, V STRING(MAX)) PRIMARY KEY (Id)';
    await ddl(db(), [create]);
    await upsert(db(), T('Newcomer'), { [T('Id')]: '1', [T('V')]: 'hello' });
    const seen = (await records(db(), dialect, 'Everything', from)).filter(
      (r) => r.tableName === T('Newcomer'),
    );
    expect(seen).toHaveLength(1);
    expect(seen[0]?.mods[0]).toMatchObject({ keys: { [T('Id')]: '1' }, newValues: { [T('V')]: 'hello' } });
    const explicit = (await records(db(), dialect, 'Explicit', from)).filter(
      (r) => r.tableName === T('Newcomer'),
    );
    expect(explicit).toHaveLength(0);
  });
});
