/**
 * A query that selects a bare parameter (`SELECT @v`, `SELECT $1`) answers in the parameter's declared type,
 * as the service does: a BOOL stays BOOL (not the 0/1 SQLite holds), an array stays an array (not its JSON
 * text), an empty or NULL value keeps its type. Through the official client, both dialects.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { Dialect } from '../../../shared/domain/change-record';
import { dialectDatabases } from './support/dialect-databases';

const t = dialectDatabases({
  GOOGLE_STANDARD_SQL: ['CREATE TABLE T (Id INT64 NOT NULL) PRIMARY KEY (Id)'],
  POSTGRESQL: ['CREATE TABLE t (id bigint NOT NULL PRIMARY KEY)'],
});

type ParamType = string | { type: 'array'; child: string };

/** Runs `SELECT <param>` with one typed parameter; returns the column's type code and its JSON value. */
async function select(dialect: Dialect, value: unknown, type: ParamType) {
  const pgsql = dialect === 'POSTGRESQL';
  const db = (pgsql ? t.pg : t.g).database;
  const name = pgsql ? 'p1' : 'v';
  const [rows, , metadata] = await db.run({
    sql: pgsql ? 'SELECT $1' : 'SELECT @v',
    params: { [name]: value },
    types: { [name]: type },
    json: true,
    // GoogleSQL names an unaliased expression column '' (as the service does); the client drops nameless
    // columns from JSON rows unless asked.
    jsonOptions: { wrapNumbers: false, includeNameless: true },
  });
  const field = metadata?.rowType?.fields?.[0]?.type;
  const row = rows[0] as Record<string, unknown>;
  return {
    code: field?.code,
    element: field?.arrayElementType?.code,
    value: Object.values(row)[0],
  };
}

const arrayOf = (child: string) => ({ type: 'array' as const, child });

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])('%s', (dialect) => {
  test('scalars keep their declared type', async () => {
    await expect(select(dialect, true, 'bool')).resolves.toMatchObject({ code: 'BOOL', value: true });
    await expect(select(dialect, false, 'bool')).resolves.toMatchObject({ code: 'BOOL', value: false });
    await expect(select(dialect, null, 'bool')).resolves.toMatchObject({ code: 'BOOL', value: null });
    await expect(select(dialect, 1.5, 'float64')).resolves.toMatchObject({ code: 'FLOAT64', value: 1.5 });
    await expect(select(dialect, Number.NaN, 'float32')).resolves.toMatchObject({ code: 'FLOAT32' });
    await expect(select(dialect, '2024-02-29', 'date')).resolves.toMatchObject({ code: 'DATE' });
    await expect(select(dialect, 42, 'int64')).resolves.toMatchObject({ code: 'INT64', value: 42 });
  });

  test('arrays stay arrays, with NULL elements, and empty arrays keep their element type', async () => {
    await expect(select(dialect, [true, null, false], arrayOf('bool'))).resolves.toEqual({
      code: 'ARRAY',
      element: 'BOOL',
      value: [true, null, false],
    });
    await expect(select(dialect, [1, 2, null], arrayOf('int64'))).resolves.toEqual({
      code: 'ARRAY',
      element: 'INT64',
      value: [1, 2, null],
    });
    await expect(select(dialect, [null, 1.1, Number.POSITIVE_INFINITY], arrayOf('float64'))).resolves.toEqual(
      {
        code: 'ARRAY',
        element: 'FLOAT64',
        value: [null, 1.1, Number.POSITIVE_INFINITY],
      },
    );
    await expect(select(dialect, [], arrayOf('string'))).resolves.toEqual({
      code: 'ARRAY',
      element: 'STRING',
      value: [],
    });
    await expect(select(dialect, null, arrayOf('int64'))).resolves.toEqual({
      code: 'ARRAY',
      element: 'INT64',
      value: null,
    });
  });
});
