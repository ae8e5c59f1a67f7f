/**
 * Result types of parameters and expressions, STRUCT / ARRAY values and the service's type errors, through
 * the official client, in both dialects.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { Spanner } from '@google-cloud/spanner';
import type { TestDatabase } from '../../../local/emulators/spanner/client';
import { dialectDatabases } from './support/dialect-databases';

const dbs = dialectDatabases(
  {
    GOOGLE_STANDARD_SQL: [
      'CREATE TABLE T (Key INT64 NOT NULL, S STRING(MAX), N NUMERIC, F FLOAT64, D DATE) PRIMARY KEY (Key)',
    ],
    POSTGRESQL: ['CREATE TABLE t (key bigint NOT NULL PRIMARY KEY, s varchar, n numeric)'],
  },
  { changeStreams: false },
);

type Query = { sql: string; params?: Record<string, unknown>; types?: Record<string, unknown> };

async function first(db: TestDatabase, q: Query): Promise<{ value: unknown; type: unknown }> {
  const [rows, , metadata] = (await db.database.run(q as never)) as unknown as [
    Array<Array<{ value: unknown }>>,
    unknown,
    { rowType: { fields: Array<{ type: unknown }> } },
  ];
  return { value: rows[0]?.[0]?.value, type: metadata?.rowType?.fields?.[0]?.type };
}

async function value(db: TestDatabase, q: Query): Promise<unknown> {
  return (await first(db, q)).value;
}

test('a bare parameter comes back with its own type', async () => {
  expect(await value(dbs.g, { sql: 'SELECT @v', params: { v: true } })).toBe(true);
  expect(await value(dbs.g, { sql: 'SELECT @v', params: { v: [false, true, null] } })).toEqual([
    false,
    true,
    null,
  ]);
  expect(
    Number.isNaN(Number(await value(dbs.g, { sql: 'SELECT @v', params: { v: Spanner.float(Number.NaN) } }))),
  ).toBe(true);
  const floats = (await value(dbs.g, {
    sql: 'SELECT @v',
    params: { v: [Spanner.float(1.5), Number.POSITIVE_INFINITY] },
  })) as unknown[];
  expect(floats.map(Number)).toEqual([1.5, Number.POSITIVE_INFINITY]);
  const ints = (await value(dbs.g, {
    sql: 'SELECT @v',
    params: { v: ['9223372036854775807', null] },
    types: { v: { type: 'array', child: 'int64' } },
  })) as Array<{ value: string } | null>;
  expect(ints.map((i) => i?.value ?? null)).toEqual(['9223372036854775807', null]);
  const ts = '2024-02-29T23:59:59.123456789Z';
  const t = (await value(dbs.g, { sql: 'SELECT @v', params: { v: Spanner.timestamp(ts) } })) as {
    getFullTimeString(): string;
  };
  expect(t.getFullTimeString()).toBe('1709251199123456789');
  const dates = (await value(dbs.g, {
    sql: 'SELECT @v',
    params: { v: [Spanner.date('2001-02-03'), null] },
  })) as unknown[];
  expect(String(dates[0])).toContain('2001');
  expect(dates[1]).toBeNull();
  expect(
    await value(dbs.g, {
      sql: 'SELECT @v',
      params: { v: [] },
      types: { v: { type: 'array', child: 'bytes' } },
    }),
  ).toEqual([]);
});

test('PostgreSQL parameters and ::oid casts keep their annotations', async () => {
  expect(await value(dbs.pg, { sql: 'SELECT $1', params: { p1: true } })).toBe(true);
  const oid = (await value(dbs.pg, { sql: 'SELECT 123::oid' })) as { value: string };
  expect(oid.value).toBe('123');
  expect(await value(dbs.pg, { sql: 'SELECT null::oid' })).toBeNull();
  const num = (await first(dbs.pg, { sql: 'SELECT $1', params: { p1: Spanner.pgNumeric('1.50') } })).type as {
    typeAnnotation: string;
  };
  expect(num.typeAnnotation).toBe('PG_NUMERIC');
  expect(((await value(dbs.pg, { sql: 'SELECT 1.5' })) as { value: string }).value).toBe('1.5');
});

test('STRUCT parameters: fields, nesting, NULL structs, equality and UNNEST of arrays of structs', async () => {
  const s = Spanner.struct({
    threadf: Spanner.int(1),
    userf: 'bob',
    arr: [Spanner.struct({ threadid: Spanner.int(12) })],
  });
  expect(await value(dbs.g, { sql: 'SELECT @s.userf', params: { s } })).toBe('bob');
  expect(await value(dbs.g, { sql: 'SELECT @s.threadf = 1', params: { s } })).toBe(true);
  const eq = await value(dbs.g, {
    sql: 'SELECT @s = STRUCT<threadf INT64, userf STRING>(1, "bob")',
    params: { s: Spanner.struct({ threadf: Spanner.int(1), userf: 'bob' }) },
  });
  expect(eq).toBe(true);
  const [rows] = await dbs.g.database.run({
    sql: 'SELECT a.threadid FROM UNNEST(@s.arr) a',
    params: { s },
    json: true,
  });
  expect(rows).toEqual([{ threadid: 12 }]);
  const nullStruct = { type: 'struct', fields: [{ name: 'f', type: 'int64' }] };
  expect(
    await value(dbs.g, { sql: 'SELECT @s IS NULL', params: { s: null }, types: { s: nullStruct } }),
  ).toBe(true);
  expect(
    await value(dbs.g, { sql: 'SELECT @s.f', params: { s: null }, types: { s: nullStruct } }),
  ).toBeNull();
  const list = [Spanner.struct({ threadid: Spanner.int(2) }), Spanner.struct({ threadid: Spanner.int(3) })];
  const [ids] = await dbs.g.database.run({
    sql: 'SELECT a.threadid FROM UNNEST(@list) a WITH OFFSET o ORDER BY o DESC',
    params: { list },
    json: true,
  });
  expect(ids).toEqual([{ threadid: 3 }, { threadid: 2 }]);
});

test('ARRAY(SELECT AS STRUCT …) and array functions', async () => {
  const structs = (await value(dbs.g, {
    sql: `SELECT ARRAY(SELECT AS STRUCT C1, C2 FROM (SELECT 'a' AS C1, 1 AS C2 UNION ALL SELECT 'b' AS C1, 2 AS C2) ORDER BY C1 ASC)`,
  })) as Array<{ toJSON(): unknown }>;
  expect(structs.map((x) => x.toJSON())).toEqual([
    { C1: 'a', C2: 1 },
    { C1: 'b', C2: 2 },
  ]);
  expect(
    await value(dbs.g, { sql: `SELECT ARRAY(SELECT AS STRUCT * FROM (SELECT 'a', 1) WHERE 0 = 1)` }),
  ).toEqual([]);
  expect(await value(dbs.g, { sql: 'SELECT ARRAY_LENGTH([1, 2, 3])' })).toEqual({ value: '3' });
  expect(await value(dbs.g, { sql: "SELECT ARRAY_TO_STRING(['a', NULL, 'c'], '-', 'x')" })).toBe('a-x-c');
  expect(await value(dbs.g, { sql: 'SELECT [10, 20, 30][OFFSET(1)] + [10, 20, 30][ORDINAL(1)]' })).toEqual({
    value: '30',
  });
  await expect(dbs.g.database.run('SELECT [1][OFFSET(5)]')).rejects.toMatchObject({ code: 11 });
  expect(await value(dbs.g, { sql: 'SELECT [1][SAFE_OFFSET(5)]' })).toBeNull();
  expect(await value(dbs.g, { sql: 'SELECT 3 IN UNNEST(@a)', params: { a: [1, 2, 3] } })).toBe(true);
});

test('types are decided by the expression, not by the values it produced', async () => {
  const ty = async (sql: string) => ((await first(dbs.g, { sql })).type as { code: string }).code;
  expect(await ty('SELECT 1 < 2')).toBe('BOOL');
  expect(await ty('SELECT 7 / 2')).toBe('FLOAT64');
  expect(Number(await value(dbs.g, { sql: 'SELECT 7 / 2' }))).toBe(3.5);
  expect(await ty('SELECT DIV(7, 2)')).toBe('INT64');
  expect(await ty('SELECT MAX(D) FROM T')).toBe('DATE');
  expect(await ty('SELECT CAST(NULL AS TIMESTAMP)')).toBe('TIMESTAMP');
  expect(await ty("SELECT IF(TRUE, NUMERIC '1.5', 2)")).toBe('NUMERIC');
  expect(await ty('SELECT COUNT(*) FROM T')).toBe('INT64');
  expect(await value(dbs.g, { sql: "SELECT CAST('12' AS INT64) + 1" })).toEqual({ value: '13' });
  expect(await value(dbs.g, { sql: "SELECT EXTRACT(YEAR FROM TIMESTAMP '2020-06-01T00:00:00Z')" })).toEqual({
    value: '2020',
  });
  expect(await value(dbs.g, { sql: "SELECT CONCAT('a', UPPER('é'), SUBSTR('hello', -3))" })).toBe('aÉllo');
});

test('an INT64 column compared with a STRING parameter is refused, never an empty result', async () => {
  const q = { sql: 'SELECT * FROM T WHERE Key = @k', params: { k: '1' } };
  await expect(dbs.g.database.run(q)).rejects.toMatchObject({
    code: 3,
    details: expect.stringMatching(
      /^No matching signature for operator = for argument types: INT64, STRING\. Supported signature: ANY = ANY \[at 1:23\]$/,
    ),
  });
  await expect(
    dbs.pg.database.run({ sql: 'SELECT * FROM t WHERE key = $1', params: { p1: 'x' } }),
  ).rejects.toMatchObject({
    code: 3,
    details: 'operator does not exist: bigint = character varying',
  });
  await expect(dbs.g.database.run('SELECT Nope FROM T')).rejects.toMatchObject({
    code: 3,
    details: 'Unrecognized name: Nope [at 1:8]',
  });
  await expect(dbs.g.database.run('SELECT NOPE(1)')).rejects.toMatchObject({
    code: 3,
    details: 'Function not found: NOPE [at 1:8]',
  });
  await expect(dbs.g.database.run('SELECT * FROM T WHERE Key')).rejects.toMatchObject({ code: 3 });
  await expect(dbs.g.database.run('SELECT 9223372036854775807 + 1')).rejects.toMatchObject({ code: 11 });
  await expect(dbs.g.database.run('SELECT 1 / 0')).rejects.toMatchObject({ code: 11 });
  await expect(dbs.g.database.run('SELECT Apples AND Oranges')).rejects.toMatchObject({ code: 3 });
});

test('GREATEST and LEAST pick the extreme of their type, NUMERIC by value, not by its text', async () => {
  const pick = (sql: string) => value(dbs.g, { sql: `SELECT ${sql}` });
  expect(await pick('GREATEST(3, 11, 2)')).toEqual({ value: '11' });
  expect(await pick('LEAST(3, 11, 2)')).toEqual({ value: '2' });
  expect(await pick("GREATEST('b', 'ab', 'a')")).toBe('b');
  expect(await pick("LEAST('b', 'ab', 'a')")).toBe('a');
  expect(await pick("GREATEST(NUMERIC '9.5', NUMERIC '10', NUMERIC '-11')")).toEqual({ value: '10' });
  expect(await pick("LEAST(NUMERIC '9.5', NUMERIC '10', NUMERIC '-11')")).toEqual({ value: '-11' });
  expect(await pick('GREATEST(7)')).toEqual({ value: '7' });
});

test('a scalar or ARRAY subquery of two columns is refused with the service message', async () => {
  await expect(value(dbs.g, { sql: 'SELECT (SELECT 1, 2)' })).rejects.toThrow(
    /Scalar subquery cannot have more than one column unless using SELECT AS STRUCT/,
  );
  await expect(value(dbs.g, { sql: 'SELECT ARRAY(SELECT 1, 2)' })).rejects.toThrow(
    /ARRAY subquery cannot have more than one column unless using SELECT AS STRUCT/,
  );
  await expect(value(dbs.g, { sql: 'SELECT ARRAY(SELECT [1])' })).rejects.toThrow(
    /nested arrays are not supported/,
  );
  expect(await value(dbs.g, { sql: 'SELECT (SELECT 5)' })).toEqual({ value: '5' });
});
