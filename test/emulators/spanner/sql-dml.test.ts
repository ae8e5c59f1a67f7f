/**
 * DML through the official client: typed assignments with the service's errors, THEN RETURN / RETURNING,
 * INSERT OR UPDATE / IGNORE, partitioned DML over many rows, and queries over tens of thousands of rows
 * with keys across the whole INT64 range and NUMERIC compared by value.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { Spanner } from '@google-cloud/spanner';
import { dialectDatabases } from './support/dialect-databases';

const t = dialectDatabases(
  {
    GOOGLE_STANDARD_SQL: [
      'CREATE TABLE T (Key INT64 NOT NULL, S STRING(MAX), N NUMERIC) PRIMARY KEY (Key)',
      'CREATE TABLE Big (Key INT64 NOT NULL, N NUMERIC, F FLOAT64) PRIMARY KEY (Key)',
    ],
    POSTGRESQL: ['CREATE TABLE t (key varchar NOT NULL PRIMARY KEY, s varchar, n bigint)'],
  },
  { changeStreams: false },
);

test('THEN RETURN and RETURNING give the written rows and the row count', async () => {
  await t.g.database.runTransactionAsync(async (tx) => {
    const [inserted, stats] = (await tx.run({
      sql: 'INSERT INTO T (Key, S) VALUES (@k, @s) THEN RETURN Key, S, N',
      params: { k: 1, s: 'a' },
      json: true,
    } as never)) as unknown as [unknown[], { rowCountExact: string }];
    expect(inserted).toEqual([{ Key: 1, S: 'a', N: null }]);
    expect(Number(stats.rowCountExact)).toBe(1);
    const [updated] = await tx.run({
      sql: 'UPDATE T t SET t.S = @s WHERE t.Key = 1 THEN RETURN *',
      params: { s: 'b' },
      json: true,
    });
    expect(updated).toEqual([{ Key: 1, S: 'b', N: null }]);
    const [deleted] = await tx.run({ sql: 'DELETE FROM T WHERE Key = 1 THEN RETURN S', json: true });
    expect(deleted).toEqual([{ S: 'b' }]);
    await tx.commit();
  });
  await t.pg.database.runTransactionAsync(async (tx) => {
    const [rows] = await tx.run({
      sql: 'INSERT INTO t (key, s) VALUES ($1, $2) RETURNING *',
      params: { p1: 'k', p2: 'x' },
      json: true,
    });
    expect(rows).toEqual([{ key: 'k', s: 'x', n: null }]);
    const [counts] = await tx.batchUpdate([
      { sql: 'UPDATE t SET n = $1 WHERE key = $2 RETURNING n', params: { p1: 5, p2: 'k' } },
      { sql: 'DELETE FROM t WHERE key = $1', params: { p1: 'k' } },
    ]);
    expect(counts).toEqual([1, 1]);
    await tx.commit();
  });
});

test('values that do not fit their column are the service errors', async () => {
  const run = (sql: string, params: Record<string, unknown> = {}) =>
    t.g.database.runTransactionAsync(async (tx) => {
      await tx.runUpdate({ sql, params });
      await tx.commit();
    });
  await expect(run("INSERT INTO T (Key, S) VALUES ('x', 'y')")).rejects.toMatchObject({
    code: 3,
    details: 'Value has type STRING which cannot be inserted into column Key, which has type INT64 [at 1:32]',
  });
  await expect(run('UPDATE T SET S = 5 WHERE Key = 1')).rejects.toMatchObject({
    code: 3,
    details: 'Value of type INT64 cannot be assigned to S, which has type STRING [at 1:14]',
  });
  await expect(run('UPDATE T SET S = @s WHERE Key = @k', { s: 'a', k: 'one' })).rejects.toMatchObject({
    code: 3,
  });
  await expect(run('UPDATE T SET Key = 2 WHERE Key = 1')).rejects.toMatchObject({ code: 3 });
});

test('INSERT OR UPDATE and INSERT OR IGNORE', async () => {
  const count = async (sql: string) =>
    t.g.database.runTransactionAsync(async (tx) => {
      const [n] = await tx.runUpdate(sql);
      await tx.commit();
      return n;
    });
  expect(await count("INSERT INTO T (Key, S, N) VALUES (10, 'a', NUMERIC '1.5')")).toBe(1);
  expect(await count("INSERT OR IGNORE INTO T (Key, S) VALUES (10, 'b'), (11, 'c')")).toBe(1);
  expect(await count("INSERT OR UPDATE INTO T (Key, S) VALUES (10, 'd')")).toBe(1);
  const [rows] = await t.g.database.run({
    sql: 'SELECT Key, S, N FROM T WHERE Key IN (10, 11) ORDER BY Key',
    json: true,
  });
  expect(rows).toEqual([
    { Key: 10, S: 'd', N: expect.objectContaining({ value: '1.5' }) },
    { Key: 11, S: 'c', N: null },
  ]);
});

test('partitioned DML updates every matching row and refuses THEN RETURN', async () => {
  const rows = Array.from({ length: 5000 }, (_, i) => ({ Key: String(1000 + i), S: 'a' }));
  await t.g.database.table('T').insert(rows);
  const [n] = await t.g.database.runPartitionedUpdate({
    sql: "UPDATE T SET S = @s WHERE S = 'a'",
    params: { s: 'b' },
  });
  expect(n).toBe(5000);
  const [[left]] = await t.g.database.run({ sql: "SELECT COUNT(*) AS c FROM T WHERE S = 'a'", json: true });
  expect(left).toEqual({ c: 0 });
  await expect(
    t.g.database.runPartitionedUpdate({
      sql: 'UPDATE T SET S = @s WHERE Key = 1000 THEN RETURN *',
      params: { s: 'c' },
    }),
  ).rejects.toMatchObject({
    details: expect.stringMatching(/THEN RETURN is not supported in Partitioned DML\./),
  });
}, 60000);

test('20,000 rows over the whole INT64 range: order, ranges and NUMERIC aggregates by value', async () => {
  const keys = ['-9223372036854775808', '9223372036854775807', '0', '-1', '9007199254740993'];
  for (let i = 0; keys.length < 20000; i++)
    keys.push(String(BigInt(i) * 461168601842738n - 4611686018427387904n));
  const nums = keys.map(
    (_, i) => `${i % 2 ? '-' : ''}${(i * 7919) % 100000}.${String(i % 1000).padStart(3, '0')}`,
  );
  for (let i = 0; i < keys.length; i += 5000) {
    const batch = keys
      .slice(i, i + 5000)
      .map((k, j) => ({ Key: k, N: Spanner.numeric(nums[i + j] as string), F: (i + j) / 3 }));
    await t.g.database.table('Big').insert(batch);
  }
  const [first] = await t.g.database.run({
    sql: 'SELECT Key FROM Big ORDER BY Key LIMIT 2',
    json: true,
    jsonOptions: { wrapNumbers: true },
  });
  expect(first.map((r) => (r as { Key: { value: string } }).Key.value)).toEqual([
    '-9223372036854775808',
    '-4611686018427387904',
  ]);
  const [[last]] = await t.g.database.run({
    sql: 'SELECT MAX(Key) AS k FROM Big',
    json: true,
    jsonOptions: { wrapNumbers: true },
  });
  expect((last as { k: { value: string } }).k.value).toBe('9223372036854775807');
  const byValue = [...nums].sort((a, b) => Number(a) - Number(b));
  const [low] = await t.g.database.run({ sql: 'SELECT N FROM Big ORDER BY N LIMIT 3', json: true });
  expect(low.map((r) => (r as { N: { value: string } }).N.value)).toEqual(
    byValue.slice(0, 3).map((x) => String(Number(x))),
  );
  const [[agg]] = await t.g.database.run({
    sql: "SELECT MIN(N) AS lo, MAX(N) AS hi, COUNT(*) AS c FROM Big WHERE N > NUMERIC '0'",
    json: true,
  });
  const positive = nums.filter((x) => Number(x) > 0).map(Number);
  expect(agg).toEqual({
    lo: expect.objectContaining({ value: String(Math.min(...positive)) }),
    hi: expect.objectContaining({ value: String(Math.max(...positive)) }),
    c: positive.length,
  });
  const [[range]] = await t.g.database.run({
    sql: 'SELECT COUNT(*) AS c FROM Big WHERE Key BETWEEN @lo AND @hi',
    params: { lo: Spanner.int('-1'), hi: Spanner.int('9223372036854775807') },
    json: true,
  });
  expect(range).toEqual({ c: keys.filter((k) => BigInt(k) >= -1n).length });
}, 60000);
