/** Issue 3 through the official client: version retention, PartitionRead, reads through an index, conflicts. */
process.env.METADATA_SERVER_DETECTION = 'none';

import { PreciseDate } from '@google-cloud/precise-date';
import { googleSqlDatabaseForFile } from './support/google-sql-database';

const spanner = googleSqlDatabaseForFile(
  [
    'CREATE TABLE Accounts (Id INT64 NOT NULL, Owner STRING(MAX) NOT NULL, Balance INT64) PRIMARY KEY (Id)',
    'CREATE INDEX AccountsByOwner ON Accounts (Owner) STORING (Balance)',
  ],
  { partitions: 4, changeStreams: false },
);

beforeAll(async () => {
  await spanner.db.database
    .table('Accounts')
    .insert(
      Array.from({ length: 40 }, (_, i) => ({ Id: String(i), Owner: `o${i % 7}`, Balance: String(i) })),
    );
});

test('version_retention_period: the database option, and reads older than it fail', async () => {
  await expect(
    spanner.db.database
      .updateSchema(["ALTER DATABASE db SET OPTIONS (version_retention_period = '30m')"])
      .then(([op]) => op.promise()),
  ).rejects.toMatchObject({ code: 3 });
  const name = spanner.db.name.split('/').pop();
  const [op] = await spanner.db.database.updateSchema([
    `ALTER DATABASE \`${name}\` SET OPTIONS (version_retention_period = '2h')`,
  ]);
  await op.promise();
  const [meta] = await spanner.db.database.getMetadata();
  expect(meta.versionRetentionPeriod).toBe('2h');
  const [opts] = await spanner.db.database.run({
    sql: "SELECT OPTION_VALUE FROM INFORMATION_SCHEMA.DATABASE_OPTIONS WHERE OPTION_NAME = 'version_retention_period'",
    json: true,
  });
  expect(opts).toEqual([{ OPTION_VALUE: '2h' }]);
  const old = new PreciseDate(Date.now() - 3 * 3600_000);
  await expect(
    spanner.db.database.run('SELECT Id FROM Accounts', { readTimestamp: old }),
  ).rejects.toMatchObject({
    code: 9,
  });
  await expect(spanner.db.database.run('SELECT 1', { exactStaleness: 3 * 3600 })).rejects.toMatchObject({
    code: 9,
  });
});

test('PartitionRead: the partitions together return every row exactly once at the snapshot', async () => {
  const [txn] = await spanner.db.database.createBatchTransaction({ strong: true });
  const [partitions] = await txn.createReadPartitions({
    table: 'Accounts',
    keySet: { all: true },
    columns: ['Id'],
  });
  expect(partitions.length).toBe(4);
  await spanner.db.database.table('Accounts').insert({ Id: '1000', Owner: 'late', Balance: '0' });
  const ids: number[] = [];
  const sizes: number[] = [];
  for (const p of partitions) {
    const [rows] = await txn.execute({ ...p, json: true } as never);
    sizes.push(rows.length);
    ids.push(...(rows as Array<{ Id: number }>).map((r) => Number(r.Id)));
  }
  expect(ids.sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i));
  expect(sizes.every((n) => n > 0)).toBe(true);
  txn.close();
});

test('StreamingRead through a secondary index', async () => {
  const [rows] = await spanner.db.database.table('Accounts').read({
    index: 'AccountsByOwner',
    keys: ['o3'],
    columns: ['Id', 'Owner', 'Balance'],
    json: true,
  });
  const ids = (rows as Array<{ Id: number }>).map((r) => Number(r.Id)).sort((a, b) => a - b);
  expect(ids).toEqual([3, 10, 17, 24, 31, 38]);
});

test('two read-write transactions writing the same row: the second commit is ABORTED', async () => {
  const [a] = await spanner.db.database.getTransaction();
  const [b] = await spanner.db.database.getTransaction();
  await a.run('SELECT Balance FROM Accounts WHERE Id = 5');
  await b.run('SELECT Balance FROM Accounts WHERE Id = 5');
  a.update('Accounts', { Id: '5', Balance: '500' });
  b.update('Accounts', { Id: '5', Balance: '-5' });
  await a.commit();
  await expect(b.commit()).rejects.toMatchObject({ code: 10 });
  const [rows] = await spanner.db.database.run({
    sql: 'SELECT Balance FROM Accounts WHERE Id = 5',
    json: true,
  });
  expect(rows).toEqual([{ Balance: 500 }]);
});

test('the transaction runner retries an ABORTED transaction to success', async () => {
  let attempts = 0;
  await spanner.db.database.runTransactionAsync(async (tx) => {
    attempts++;
    const [rows] = await tx.run({ sql: 'SELECT Balance FROM Accounts WHERE Id = 6', json: true });
    if (attempts === 1) await spanner.db.database.table('Accounts').update({ Id: '6', Balance: '60' });
    tx.update('Accounts', { Id: '6', Balance: String(Number((rows[0] as { Balance: number }).Balance) + 1) });
    await tx.commit();
  });
  expect(attempts).toBe(2);
  const [rows] = await spanner.db.database.run({
    sql: 'SELECT Balance FROM Accounts WHERE Id = 6',
    json: true,
  });
  expect(rows).toEqual([{ Balance: 61 }]);
});

test('a commit larger than gRPC default 4 MiB is accepted and read back whole', async () => {
  const [op] = await spanner.db.database.updateSchema([
    'CREATE TABLE Blobs (Id INT64 NOT NULL, Body STRING(MAX)) PRIMARY KEY (Id)',
  ]);
  await op.promise();
  const body = 'x'.repeat(1024 * 1024);
  const rows = Array.from({ length: 12 }, (_, i) => ({ Id: String(i), Body: `${i}${body}` }));
  await spanner.db.database.table('Blobs').insert(rows);
  const [read] = await spanner.db.database.run({ sql: 'SELECT Id, Body FROM Blobs ORDER BY Id', json: true });
  const got = read as unknown as Array<{ Id: number; Body: string }>;
  expect(got.map((r) => [r.Id, r.Body.length, r.Body.startsWith(String(r.Id))])).toEqual(
    rows.map((r) => [Number(r.Id), r.Body.length, true]),
  );
}, 60000);
