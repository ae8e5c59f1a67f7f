/**
 * Aggregate queries through the unmodified `@google-cloud/bigquery`, as BigQuery answers them
 * (https://cloud.google.com/bigquery/docs/reference/standard-sql/aggregate_functions and query syntax,
 * GROUP BY): one row per group, COUNT(*) / COUNT(DISTINCT) / ANY_VALUE (NULLs ignored) and `=` of two
 * aggregates; one row without GROUP BY even over no rows; a column neither grouped nor aggregated refused.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { type BigQueryEmulator, startBigQueryEmulator } from '../../../local/emulators/bigquery/emulator';
import { defaultJsonWriter, tablePath } from './fixtures';

let emu: BigQueryEmulator;

beforeAll(async () => {
  emu = await startBigQueryEmulator({});
  const bq = emu.bigquery();
  await bq.createDataset('agg');
  await bq.dataset('agg').createTable('h', {
    schema: [
      { name: 'tx', type: 'STRING' },
      { name: 'mod_type', type: 'STRING' },
      { name: 'seq', type: 'INT64' },
      { name: 'records', type: 'INT64' },
    ],
  });
  const { writer } = await defaultJsonWriter(emu.writerClient(), tablePath(emu, 'agg', 'h'));
  await writer
    .appendRows([
      { tx: 'a', mod_type: 'INSERT', seq: 0, records: 2 },
      { tx: 'a', mod_type: 'UPDATE', seq: 1, records: 2 },
      { tx: 'a', mod_type: 'UPDATE', seq: 1, records: null },
      { tx: 'b', mod_type: 'INSERT', seq: 0, records: 3 },
    ])
    .getResult();
  writer.close();
}, 30_000);

afterAll(() => emu?.stop());

async function query(sql: string): Promise<unknown[]> {
  const [rows] = await emu.bigquery().query({ query: sql });
  return rows;
}

test('GROUP BY a column with COUNT(*), ordered by the count', async () => {
  expect(
    await query('SELECT mod_type, COUNT(*) AS n FROM agg.h GROUP BY mod_type ORDER BY n DESC, mod_type'),
  ).toEqual([
    { mod_type: 'INSERT', n: 2 },
    { mod_type: 'UPDATE', n: 2 },
  ]);
  // An unnamed aggregate is f0_, as the service names it; an ordinal groups by the SELECT list's column.
  expect(await query('SELECT mod_type, COUNT(*) FROM agg.h GROUP BY 1 ORDER BY mod_type')).toEqual([
    { mod_type: 'INSERT', f0_: 2 },
    { mod_type: 'UPDATE', f0_: 2 },
  ]);
});

test('ANY_VALUE ignores NULLs; COUNT(DISTINCT) and the BOOL of two aggregates compared', async () => {
  const rows = await query(
    `SELECT tx, ANY_VALUE(records) AS records, COUNT(DISTINCT seq) AS seen,
       COUNT(DISTINCT seq) = ANY_VALUE(records) AS complete
     FROM \`${emu.projectId}.agg.h\` WHERE mod_type != 'SNAPSHOT' GROUP BY tx ORDER BY tx`,
  );
  expect(rows).toEqual([
    { tx: 'a', records: 2, seen: 2, complete: true },
    { tx: 'b', records: 3, seen: 1, complete: false },
  ]);
});

test('without GROUP BY one row, even over no rows; with it none', async () => {
  expect(await query("SELECT COUNT(*) AS n, ANY_VALUE(tx) AS t FROM agg.h WHERE tx = 'none'")).toEqual([
    { n: 0, t: null },
  ]);
  expect(await query("SELECT tx, COUNT(*) AS n FROM agg.h WHERE tx = 'none' GROUP BY tx")).toEqual([]);
});

test('a column neither grouped nor aggregated is refused, as the service refuses it', async () => {
  await expect(query('SELECT tx, seq, COUNT(*) FROM agg.h GROUP BY tx')).rejects.toThrow(
    /SELECT list expression references column seq which is neither grouped nor aggregated/,
  );
  await expect(query('SELECT tx, COUNT(*) FROM agg.h')).rejects.toThrow(/neither grouped nor aggregated/);
});
