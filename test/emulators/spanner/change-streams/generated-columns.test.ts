/**
 * Generated and hidden columns through the official client, in both dialects: stored and non-stored values
 * computed on every write (and for existing rows when a generated column is added), INFORMATION_SCHEMA's
 * view of them, writes into them refused, and change streams that never carry a non-key generated column
 * (a generated key column arrives in `keys`). A HIDDEN TOKENLIST column stays out of `SELECT *` and records.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { Database } from '@google-cloud/spanner';
import type { Dialect } from '../../../../shared/domain/change-record';
import { applyDdl, dialectDatabases, dialectName } from '../support/dialect-databases';
import { walkDag } from './client-read';

const DDL: Record<Dialect, string[]> = {
  GOOGLE_STANDARD_SQL: [
    `CREATE TABLE People (Id INT64 NOT NULL, First STRING(MAX), Last STRING(MAX), Score INT64,
       FullName STRING(MAX) AS (CONCAT(First, ' ', Last)) STORED,
       Doubled INT64 AS (Score * 2),
       Tokens TOKENLIST AS (TOKENIZE_FULLTEXT(First)) HIDDEN) PRIMARY KEY (Id)`,
    'CREATE TABLE Keyed (A INT64 NOT NULL, K INT64 NOT NULL AS (A * 10) STORED, V STRING(MAX)) PRIMARY KEY (K)',
    "CREATE CHANGE STREAM Everything FOR ALL OPTIONS (value_capture_type = 'NEW_ROW')",
  ],
  POSTGRESQL: [
    `CREATE TABLE people (id bigint NOT NULL PRIMARY KEY, first varchar, last varchar, score bigint,
       fullname varchar GENERATED ALWAYS AS (first || ' ' || last) STORED,
       doubled bigint GENERATED ALWAYS AS (score * 2) VIRTUAL,
       tokens spanner.tokenlist GENERATED ALWAYS AS (spanner.tokenize_fulltext(first)) VIRTUAL HIDDEN)`,
    `CREATE TABLE keyed (a bigint NOT NULL, k bigint NOT NULL GENERATED ALWAYS AS (a * 10) STORED, v varchar,
       PRIMARY KEY (k))`,
    "CREATE CHANGE STREAM everything FOR ALL WITH (value_capture_type = 'NEW_ROW')",
  ],
};

const t = dialectDatabases(DDL);
const n = dialectName;
const ddl = applyDdl;

async function rows(db: Database, sql: string): Promise<Array<Record<string, unknown>>> {
  const [out] = await db.run({ sql, json: true });
  return out as Array<Record<string, unknown>>;
}

describe.each(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'] as const)('%s', (dialect) => {
  const db = () => t.db(dialect).database;
  const T = (name: string) => n(dialect, name);
  const peopleTable = () => db().table(T('People'));

  test('stored and non-stored generated columns are computed on insert and update', async () => {
    await peopleTable().insert({ [T('Id')]: '1', [T('First')]: 'Ada', [T('Last')]: 'L', [T('Score')]: '21' });
    await peopleTable().update({ [T('Id')]: '1', [T('Last')]: 'Lovelace' });
    const [row] = await rows(db(), `SELECT * FROM ${T('People')}`);
    expect(row).toEqual({
      [T('Id')]: 1,
      [T('First')]: 'Ada',
      [T('Last')]: 'Lovelace',
      [T('Score')]: 21,
      [T('FullName')]: 'Ada Lovelace',
      [T('Doubled')]: 42,
    });
    const write = peopleTable().update({ [T('Id')]: '1', [T('FullName')]: 'x' });
    await expect(write).rejects.toMatchObject({
      code: 9,
      message: expect.stringMatching(/Cannot write into generated column/),
    });
  });

  test('INFORMATION_SCHEMA reports generated, stored and hidden columns', async () => {
    const sql =
      dialect === 'POSTGRESQL'
        ? "SELECT column_name, is_generated, is_stored, generation_expression, is_hidden, spanner_type FROM information_schema.columns WHERE table_name = 'people' ORDER BY ordinal_position"
        : "SELECT COLUMN_NAME, IS_GENERATED, IS_STORED, GENERATION_EXPRESSION, IS_HIDDEN, SPANNER_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'People' ORDER BY ORDINAL_POSITION";
    const out = (await rows(db(), sql)).map((r) => Object.values(r));
    const yes = dialect === 'POSTGRESQL' ? 'YES' : true;
    const no = dialect === 'POSTGRESQL' ? 'NO' : false;
    expect(out.map((r) => r.slice(0, 3))).toEqual([
      [T('Id'), 'NEVER', null],
      [T('First'), 'NEVER', null],
      [T('Last'), 'NEVER', null],
      [T('Score'), 'NEVER', null],
      [T('FullName'), 'ALWAYS', 'YES'],
      [T('Doubled'), 'ALWAYS', 'NO'],
      [T('Tokens'), 'ALWAYS', 'NO'],
    ]);
    expect(out.map((r) => r[4])).toEqual([no, no, no, no, no, no, yes]);
    expect(out[6]?.[5]).toBe(dialect === 'POSTGRESQL' ? 'spanner.tokenlist' : 'TOKENLIST');
    expect(out[4]?.[3]).toMatch(/First|first/);
  });

  test('change streams carry no non-key generated or hidden column; a generated key arrives in keys', async () => {
    const from = t.emu.admin.nowNs();
    await peopleTable().upsert({
      [T('Id')]: '2',
      [T('First')]: 'Grace',
      [T('Last')]: 'H',
      [T('Score')]: '1',
    });
    await db()
      .table(T('Keyed'))
      .insert({ [T('A')]: '4', [T('V')]: 'v' });
    const walk = await walkDag(db(), dialect, T('Everything'), from, t.emu.admin.nowNs());
    const people = walk.data.find((r) => r.tableName === T('People'));
    expect(people?.columnTypes.map((c) => c.name)).toEqual([T('Id'), T('First'), T('Last'), T('Score')]);
    expect(Object.keys(people?.mods[0]?.newValues ?? {})).toEqual([T('First'), T('Last'), T('Score')]);
    const keyed = walk.data.find((r) => r.tableName === T('Keyed'));
    expect(keyed?.mods[0]?.keys).toEqual({ [T('K')]: '40' });
    expect(keyed?.mods[0]?.newValues).toEqual({ [T('A')]: '4', [T('V')]: 'v' });
  });

  test('a generated column cannot be listed by a stream, and a column it reads cannot be dropped', async () => {
    await expect(
      ddl(db(), [`CREATE CHANGE STREAM ${T('Gen')} FOR ${T('People')}(${T('FullName')})`]),
    ).rejects.toMatchObject({ code: 9, message: expect.stringMatching(/non-key generated column/) });
    await expect(ddl(db(), [`ALTER TABLE ${T('People')} DROP COLUMN ${T('Last')}`])).rejects.toMatchObject({
      code: 9,
      message: expect.stringMatching(/referenced by generated column/),
    });
  });

  test('an added generated column is computed for the rows already stored', async () => {
    const add =
      dialect === 'POSTGRESQL'
        ? 'ALTER TABLE people ADD COLUMN initials varchar GENERATED ALWAYS AS (substr(first, 1, 1) || substr(last, 1, 1)) STORED'
        : 'ALTER TABLE People ADD COLUMN Initials STRING(MAX) AS (CONCAT(SUBSTR(First, 1, 1), SUBSTR(Last, 1, 1))) STORED';
    await ddl(db(), [add]);
    const out = await rows(
      db(),
      `SELECT ${T('Id')}, ${T('Initials')} FROM ${T('People')} ORDER BY ${T('Id')}`,
    );
    expect(out).toEqual([
      { [T('Id')]: 1, [T('Initials')]: 'AL' },
      { [T('Id')]: 2, [T('Initials')]: 'GH' },
    ]);
  });
});
