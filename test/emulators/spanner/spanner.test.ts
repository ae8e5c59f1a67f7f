/** The Spanner emulator through the official client: DDL, writes, reads, snapshots, partitions, errors, faults. */
process.env.METADATA_SERVER_DETECTION = 'none';

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MutationGroup, Spanner } from '@google-cloud/spanner';
import { createTestDatabase, type TestDatabase } from '../../../local/emulators/spanner/client';
import { type RunningSpannerEmulator, startSpannerEmulator } from '../../../local/emulators/spanner/server';

const GSQL_DDL = [
  `CREATE TABLE Singers (SingerId INT64 NOT NULL, Name STRING(MAX) NOT NULL, Score FLOAT64, Active BOOL,
   Born DATE, At TIMESTAMP, Raw BYTES(MAX), Amount NUMERIC, Doc JSON, Tags ARRAY<STRING(MAX)>,
   Nums ARRAY<INT64>) PRIMARY KEY (SingerId)`,
  'CREATE UNIQUE INDEX SingersByName ON Singers (Name)',
];
const PG_DDL = [
  `CREATE TABLE singers (singer_id bigint NOT NULL PRIMARY KEY, name varchar(100), score float8, active boolean,
   born date, at timestamptz, raw bytea, amount numeric, doc jsonb, tags text[])`,
];

let emu: RunningSpannerEmulator;
let g: TestDatabase;
let pg: TestDatabase;

beforeAll(async () => {
  emu = await startSpannerEmulator({ port: 0, partitions: 3 });
  g = await createTestDatabase(emu, 'GOOGLE_STANDARD_SQL', GSQL_DDL);
  pg = await createTestDatabase(emu, 'POSTGRESQL', PG_DDL);
});

afterAll(async () => {
  await g?.close();
  await pg?.close();
  await emu?.stop();
});

test('every GoogleSQL type round-trips through mutations and queries', async () => {
  await g.database.table('Singers').insert({
    SingerId: '9007199254740993',
    Name: 'Ann',
    Score: 1.25,
    Active: true,
    Born: '2001-02-03',
    At: '2024-01-01T00:00:00.123456789Z',
    Raw: Buffer.from([0, 1, 255]),
    Amount: Spanner.numeric('12.340'),
    Doc: { b: 1, a: [true] },
    Tags: ['x', null],
    Nums: ['1', '2'],
  });
  const [rows] = await g.database.run({
    sql: 'SELECT * FROM Singers WHERE SingerId = @id',
    params: { id: Spanner.int('9007199254740993') },
    json: true,
    jsonOptions: { wrapNumbers: true },
  });
  const r = rows[0] as Record<
    string,
    { value?: string; toISOString?: () => string; getFullTime?: () => string } & unknown
  >;
  expect((r.SingerId as { value: string }).value).toBe('9007199254740993');
  expect((r.At as unknown as { getFullTime(): string }).getFullTime()).toBe(1704067200123456789n);
  expect((r.Amount as { value: string }).value).toBe('12.34');
  expect(r.Doc).toEqual({ a: [true], b: 1 });
  expect(r.Raw).toEqual(Buffer.from([0, 1, 255]));
  expect(r.Tags).toEqual(['x', null]);
  expect(r.Active).toBe(true);
  expect(String(r.Born)).toContain('2001');
});

test('PostgreSQL dialect: $n parameters, DML and types', async () => {
  await pg.database.runTransactionAsync(async (tx) => {
    const [n] = await tx.runUpdate({
      sql: 'INSERT INTO singers (singer_id, name, score, amount, doc) VALUES ($1, $2, $3, $4, $5)',
      params: { p1: 1, p2: 'Bo', p3: 2.5, p4: Spanner.pgNumeric('3.5'), p5: Spanner.pgJsonb({ k: 'v' }) },
    });
    expect(n).toBe(1);
    await tx.commit();
  });
  const [rows] = await pg.database.run({
    sql: 'SELECT singer_id, name, doc FROM singers WHERE singer_id = $1',
    params: { p1: 1 },
    json: true,
  });
  expect(rows).toHaveLength(1);
  expect((rows[0] as { name: string }).name).toBe('Bo');
  const [opts] = await pg.database.run({
    sql: "SELECT option_value FROM information_schema.database_options WHERE option_name = 'database_dialect'",
    json: true,
  });
  expect(opts).toEqual([{ option_value: 'POSTGRESQL' }]);
});

test('DML, read-only snapshots in the past and batch write', async () => {
  const t = g.database.table('Singers');
  await t.insert({ SingerId: '1', Name: 'One' });
  const [ts] = await g.database.getSnapshot({ strong: true }).then(async ([snap]) => {
    const [, meta] = [await snap.run('SELECT 1'), snap.readTimestamp];
    snap.end();
    return [meta];
  });
  await g.database.runTransactionAsync(async (tx) => {
    await tx.runUpdate({ sql: 'UPDATE Singers SET Name = @n WHERE SingerId = 1', params: { n: 'Uno' } });
    await tx.commit();
  });
  const [past] = await g.database.run(
    { sql: 'SELECT Name FROM Singers WHERE SingerId = 1', json: true },
    { readTimestamp: ts },
  );
  expect(past).toEqual([{ Name: 'One' }]);
  const [now] = await g.database.run({ sql: 'SELECT Name FROM Singers WHERE SingerId = 1', json: true });
  expect(now).toEqual([{ Name: 'Uno' }]);
  const ok = new MutationGroup();
  ok.insert('Singers', { SingerId: '2', Name: 'Two' });
  const dup = new MutationGroup();
  dup.insert('Singers', { SingerId: '1', Name: 'Again' });
  const responses: Array<{ indexes: number[]; status: { code: number } }> = [];
  await new Promise<void>((resolve, reject) =>
    g.database
      .batchWriteAtLeastOnce([ok, dup])
      .on('data', (r) => responses.push(r as never))
      .on('error', reject)
      .on('end', resolve),
  );
  expect(responses.map((r) => [r.indexes, r.status.code])).toEqual([
    [[0], 0],
    [[1], 6],
  ]);
});

test('constraint violations and unsupported SQL give the real codes', async () => {
  await expect(g.database.table('Singers').insert({ SingerId: '1', Name: 'x' })).rejects.toMatchObject({
    code: 6,
  });
  await expect(g.database.table('Singers').update({ SingerId: '404', Name: 'x' })).rejects.toMatchObject({
    code: 5,
  });
  await expect(g.database.table('Singers').insert({ SingerId: '77' })).rejects.toMatchObject({ code: 9 });
  await expect(g.database.table('Singers').insert({ SingerId: '78', Name: 'Two' })).rejects.toMatchObject({
    code: 6,
  });
  await expect(g.database.run('SELECT * FROM READ_cs(NULL)')).rejects.toMatchObject({ code: 3 });
  const [unnested] = await g.database.run({ sql: 'SELECT x FROM UNNEST([1,2]) AS x', json: true });
  expect(unnested).toEqual([{ x: 1 }, { x: 2 }]);
});

test('a partitioned query covers the table exactly once, executed from a second process', async () => {
  await g.database
    .table('Singers')
    .insert(Array.from({ length: 20 }, (_, i) => ({ SingerId: String(100 + i), Name: `p${i}` })));
  const [txn] = await g.database.createBatchTransaction({ strong: true });
  const [partitions] = await txn.createQueryPartitions('SELECT SingerId FROM Singers');
  expect(partitions.length).toBe(3);
  await g.database.table('Singers').insert({ SingerId: '999', Name: 'late' });
  const identifier = txn.identifier();
  const run = promisify(execFile);
  const [instance, database] = [g.instance.formattedName_.split('/').pop(), g.name.split('/').pop()];
  const ids: string[] = [];
  for (const p of partitions) {
    const partition = {
      ...p,
      partitionToken: Buffer.from(p.partitionToken as Uint8Array).toString('base64'),
    };
    const job = JSON.stringify({ port: emu.port, instance, database, identifier, partition });
    const { stdout } = await run(process.execPath, [
      require.resolve('tsx/cli'),
      join(__dirname, 'partition-worker.ts'),
      job,
    ]);
    ids.push(...(JSON.parse(stdout) as Array<{ SingerId: string }>).map((r) => String(r.SingerId)));
  }
  const [all] = await txn.run({
    sql: 'SELECT SingerId FROM Singers',
    json: true,
    jsonOptions: { wrapNumbers: true },
  });
  expect(ids.sort()).toEqual(all.map((r) => (r as { SingerId: { value: string } }).SingerId.value).sort());
  expect(ids).not.toContain('999');
  await expect(txn.createQueryPartitions('SELECT COUNT(*) FROM Singers')).rejects.toMatchObject({ code: 3 });
  txn.close();
}, 40000);

test('faults injected through the admin handle reach the client', async () => {
  emu.admin.faults.add({ method: 'Commit', times: 1, code: 9 });
  await expect(g.database.table('Singers').insert({ SingerId: '55', Name: 'f' })).rejects.toMatchObject({
    code: 9,
  });
  const res = await fetch(`${emu.adminUrl}/faults`);
  expect(((await res.json()) as unknown[]).length).toBe(1);
});
