/**
 * Logical views through the unmodified `@google-cloud/bigquery`: created with `view.query`, listed and
 * described as `VIEW` with the query's result schema, queried (also through another view) with the live
 * rows of the table below, refused where BigQuery refuses them; and COUNT(DISTINCT …) next to COUNT(*).
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { type BigQueryEmulator, startBigQueryEmulator } from '../../../local/emulators/bigquery/emulator';
import { bigQueryCalls, defaultJsonWriter, ok, tablePath } from './fixtures';
import type { ProbeResult, ProbeStep } from './rest-probe';

const DS = 'views';
let emu: BigQueryEmulator;

const SCHEMA = [
  { name: 'change_id', type: 'STRING', mode: 'REQUIRED' },
  { name: 'mod_type', type: 'STRING', mode: 'REQUIRED' },
  { name: 'n', type: 'INTEGER' },
];

/** The step creating view `table` over `query` (standard SQL unless `useLegacySql`). */
function createView(table: string, query: string, useLegacySql = false): ProbeStep {
  return { op: 'createTable', dataset: DS, table, options: { view: { query, useLegacySql } } };
}

function failure(r: ProbeResult | undefined): { code?: number; message: string; reasons: string[] } {
  if (!r || !('error' in r)) throw new Error(`expected a failure, got ${JSON.stringify(r)}`);
  return r.error;
}

beforeAll(async () => {
  emu = await startBigQueryEmulator({});
  const created = await bigQueryCalls(emu, [
    { op: 'createDataset', dataset: DS },
    { op: 'createTable', dataset: DS, table: 'history', options: { schema: SCHEMA } },
  ]);
  for (const r of created) ok(r);
  const { writer } = await defaultJsonWriter(emu.writerClient(), tablePath(emu, DS, 'history'));
  const rows = [
    { change_id: 'a', mod_type: 'INSERT', n: 1 },
    { change_id: 'a', mod_type: 'INSERT', n: 1 },
    { change_id: 'b', mod_type: 'UPDATE', n: 2 },
    { change_id: 'c', mod_type: 'DELETE', n: 3 },
  ];
  expect((await writer.appendRows(rows).getResult()).error).toBeFalsy();
  writer.close();
});
afterAll(() => emu.stop());

test('a view is stored as VIEW with its result schema and queried over the live rows', async () => {
  const [inserted, meta, listed, all, counted, nested, listRows] = await bigQueryCalls(emu, [
    createView(
      'changes',
      `SELECT change_id, n FROM \`${emu.projectId}.${DS}.history\` WHERE mod_type != 'DELETE'`,
    ),
    { op: 'getMetadata', dataset: DS, table: 'changes' },
    { op: 'getTables', dataset: DS },
    { op: 'query', query: `SELECT * FROM ${DS}.changes ORDER BY n DESC LIMIT 2` },
    {
      op: 'query',
      query: `SELECT COUNT(*) AS rows_, COUNT(DISTINCT change_id) AS ids FROM ${DS}.changes`,
    },
    createView('big_changes', `SELECT change_id FROM ${DS}.changes WHERE n >= 2`),
    { op: 'getRows', dataset: DS, table: 'changes' },
  ]);
  ok(inserted);
  const m = ok<Record<string, unknown>>(meta);
  expect(m.type).toBe('VIEW');
  expect(m.view).toEqual({ query: expect.stringContaining('WHERE mod_type'), useLegacySql: false });
  expect((m.schema as { fields: Array<{ name: string }> }).fields.map((f) => f.name)).toEqual([
    'change_id',
    'n',
  ]);
  expect(ok<string[]>(listed).sort()).toEqual(['changes', 'history']);
  expect(ok(all)).toEqual([
    { change_id: 'b', n: 2 },
    { change_id: 'a', n: 1 },
  ]);
  expect(ok(counted)).toEqual([{ rows_: 3, ids: 2 }]);
  ok(nested);
  expect(failure(listRows).message).toMatch(/Cannot list a table of type VIEW/);
  const [throughNested] = await bigQueryCalls(emu, [
    { op: 'query', query: `SELECT COUNT(*) AS n FROM ${DS}.big_changes` },
  ]);
  expect(ok(throughNested)).toEqual([{ n: 1 }]);
});

test('a dedup view with QUALIFY ROW_NUMBER() keeps one row per key', async () => {
  const [created, all, counted] = await bigQueryCalls(emu, [
    createView(
      'dedup',
      `SELECT * FROM \`${emu.projectId}.${DS}.history\` WHERE TRUE QUALIFY ROW_NUMBER() OVER (PARTITION BY change_id ORDER BY n) = 1`,
    ),
    { op: 'query', query: `SELECT change_id FROM ${DS}.dedup ORDER BY change_id` },
    { op: 'query', query: `SELECT COUNT(*) AS n FROM ${DS}.dedup LIMIT 1` },
  ]);
  ok(created);
  expect(ok(all)).toEqual([{ change_id: 'a' }, { change_id: 'b' }, { change_id: 'c' }]);
  expect(ok(counted)).toEqual([{ n: 3 }]);
});

test('views BigQuery would refuse are refused at creation', async () => {
  const [legacy, badColumn, missingTable] = await bigQueryCalls(emu, [
    createView('v1', `SELECT * FROM [${DS}.history]`, true),
    createView('v2', `SELECT nope FROM ${DS}.history`),
    createView('v3', `SELECT * FROM ${DS}.absent`),
  ]);
  expect(failure(legacy).message).toMatch(/useLegacySql/);
  expect(failure(badColumn).message).toMatch(/Unrecognized name: nope/);
  expect(failure(missingTable).code).toBe(404);
});

test('COUNT(DISTINCT column) counts each value once, next to COUNT(*)', async () => {
  const [counted, unknown] = await bigQueryCalls(emu, [
    {
      op: 'query',
      query: `SELECT COUNT(*), COUNT(DISTINCT change_id) AS ids FROM ${DS}.history WHERE n < 3`,
    },
    { op: 'query', query: `SELECT COUNT(DISTINCT nope) FROM ${DS}.history` },
  ]);
  expect(ok(counted)).toEqual([{ f0_: 3, ids: 2 }]);
  expect(failure(unknown).message).toMatch(/Unrecognized name: nope/);
});
