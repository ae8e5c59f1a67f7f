/**
 * FLOAT64 key columns hold +Infinity, -Infinity, NaN and the largest finite value as four rows, through the
 * official client: each can be written, read back by its key alone and deleted alone, NaN ordered first;
 * NUMERIC keys that differ only in their last digit are told apart by a key read.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { Spanner } from '@google-cloud/spanner';
import { googleSqlDatabaseForFile } from './support/google-sql-database';

const spanner = googleSqlDatabaseForFile(
  [
    'CREATE TABLE F (K FLOAT64 NOT NULL, V STRING(MAX)) PRIMARY KEY (K)',
    'CREATE TABLE N (K NUMERIC NOT NULL, V STRING(MAX)) PRIMARY KEY (K)',
  ],
  { changeStreams: false },
);

const labels = async () => {
  const [rows] = await spanner.db.database.run({ sql: 'SELECT V FROM F ORDER BY V', json: true });
  return (rows as Array<{ V: string }>).map((r) => r.V);
};

test('non-finite FLOAT64 keys are distinct rows', async () => {
  const table = spanner.db.database.table('F');
  await table.upsert([
    { K: 'Infinity', V: 'inf' },
    { K: '-Infinity', V: 'minus inf' },
    { K: 'NaN', V: 'nan' },
    { K: Spanner.float(1.7976931348623157e308), V: 'max' },
  ]);
  expect(await labels()).toEqual(['inf', 'max', 'minus inf', 'nan']);
  const [found] = await table.read({ keys: [['-Infinity']], columns: ['V'], json: true });
  expect(found).toEqual([{ V: 'minus inf' }]);
  const [nan] = await table.read({ keys: [['NaN']], columns: ['V'], json: true });
  expect(nan).toEqual([{ V: 'nan' }]);
  const [ordered] = await table.read({ keySet: { all: true }, columns: ['V'], json: true } as never);
  expect((ordered as Array<{ V: string }>).map((r) => r.V)).toEqual(['nan', 'minus inf', 'max', 'inf']);
  await table.deleteRows([['Infinity']]);
  expect(await labels()).toEqual(['max', 'minus inf', 'nan']);
});

test('NUMERIC keys differing in the last of 38 digits are distinct keys', async () => {
  const table = spanner.db.database.table('N');
  const big = '99999999999999999999999999999.99999999';
  await table.upsert([
    { K: Spanner.numeric(`${big}9`), V: 'nine' },
    { K: Spanner.numeric(`${big}8`), V: 'eight' },
  ]);
  const [rows] = await table.read({ keys: [[`${big}8`]], columns: ['V'], json: true });
  expect(rows).toEqual([{ V: 'eight' }]);
});
