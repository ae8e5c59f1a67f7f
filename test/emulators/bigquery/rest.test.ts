/**
 * The REST surface through the unmodified `@google-cloud/bigquery`: datasets and tables, tabledata.list and
 * jobs.query returning every type as written, the SELECT subset and its refusals, both endpoint settings.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { type BigQueryEmulator, startBigQueryEmulator } from '../../../local/emulators/bigquery/emulator';
import { ALL_TYPES_SCHEMA, bigQueryCalls, defaultJsonWriter, ok, tablePath } from './fixtures';

const DS = 'rest';
let emu: BigQueryEmulator;

const WRITTEN = {
  id: 1,
  name: 'Octavia',
  score: 1.5,
  active: true,
  // BYTES as base64 text: the JSON row type has no Buffer, and the encoder decodes base64 for bytes fields.
  payload: Buffer.from('hi there').toString('base64'),
  ts: 1672574400123456,
  day: 19358,
  clock: '12:34:56.789',
  local: '2023-01-01 12:00:00.5',
  amount: '1234.56',
  big: '12345678901234567890.123',
  place: 'POINT(1 2)',
  doc: JSON.stringify({ a: [1, 2] }),
  tags: ['x', 'y'],
  meta: { k: 'kk', n: 7 },
};

/** What the client returns for WRITTEN, once JSON-serialised by the probe. */
const READ_BACK = {
  id: 1,
  name: 'Octavia',
  score: 1.5,
  active: true,
  payload: { type: 'Buffer', data: [...Buffer.from('hi there')] },
  day: { value: '2023-01-01' },
  clock: { value: '12:34:56.789' },
  // Written with a space, returned with a `T`, as the service answers (its own write-client samples expect it).
  local: { value: '2023-01-01T12:00:00.5' },
  amount: '1234.56',
  big: '12345678901234567890.123',
  place: { value: 'POINT(1 2)' },
  doc: '{"a":[1,2]}',
  tags: ['x', 'y'],
  meta: { k: 'kk', n: 7 },
};

beforeAll(async () => {
  emu = await startBigQueryEmulator({});
  const created = await bigQueryCalls(emu, [
    { op: 'createDataset', dataset: DS },
    {
      op: 'createTable',
      dataset: DS,
      table: 'all_types',
      options: {
        schema: ALL_TYPES_SCHEMA,
        tableConstraints: { primaryKey: { columns: ['id'] } },
        maxStaleness: '0-0 0 0:10:0',
        timePartitioning: { type: 'DAY', field: 'ts' },
        clustering: { fields: ['id'] },
      },
    },
  ]);
  created.forEach(ok);
  const { writer } = await defaultJsonWriter(emu.writerClient(), tablePath(emu, DS, 'all_types'));
  const res = await writer
    .appendRows([WRITTEN, { id: 2 }, { id: 3, name: 'Zed', score: -2, tags: [] }])
    .getResult();
  expect(res.error).toBeFalsy();
  writer.close();
});
afterAll(() => emu.stop());

test('tables.get returns the schema and the CDC / partitioning settings as given', async () => {
  const [meta, list, missing] = await bigQueryCalls(emu, [
    { op: 'getMetadata', dataset: DS, table: 'all_types' },
    { op: 'getTables', dataset: DS },
    { op: 'exists', dataset: DS, table: 'nope' },
  ]);
  expect(ok(meta)).toMatchObject({
    tableReference: { projectId: emu.projectId, datasetId: DS, tableId: 'all_types' },
    tableConstraints: { primaryKey: { columns: ['id'] } },
    maxStaleness: '0-0 0 0:10:0',
    timePartitioning: { type: 'DAY', field: 'ts' },
    clustering: { fields: ['id'] },
    numRows: '3',
  });
  expect(
    ok<{ schema: { fields: Array<{ name: string; type: string }> } }>(meta).schema.fields.map((f) => f.type),
  ).toEqual(ALL_TYPES_SCHEMA.map((f) => f.type));
  expect(ok(list)).toEqual(['all_types']);
  expect(ok(missing)).toBe(false);
});

test('tabledata.list returns every type as written', async () => {
  const [rows] = await bigQueryCalls(emu, [{ op: 'getRows', dataset: DS, table: 'all_types' }]);
  const [first, second] = ok<Array<Record<string, unknown>>>(rows);
  // The client re-renders ISO8601 timestamps with nanosecond digits.
  expect(first).toEqual({ ...READ_BACK, ts: { value: '2023-01-01T12:00:00.123456000Z' } });
  expect(second).toMatchObject({ id: 2, name: null, ts: null, tags: [], meta: null, payload: null });
});

test('jobs.query returns every type as written, with integer-microsecond timestamps', async () => {
  const [all] = await bigQueryCalls(emu, [
    { op: 'query', query: `SELECT * FROM \`${emu.projectId}.${DS}.all_types\` WHERE id = 1` },
  ]);
  const [row] = ok<Array<Record<string, unknown>>>(all);
  expect(row).toEqual({ ...READ_BACK, ts: { value: '2023-01-01T12:00:00.123456000Z' } });
});

test('the SELECT subset: columns, aliases (ORDER BY one too), WHERE, ORDER BY, LIMIT/OFFSET, COUNT(*), parameters', async () => {
  const results = await bigQueryCalls(emu, [
    {
      op: 'query',
      query: `SELECT id AS n, name FROM ${DS}.all_types WHERE name IS NOT NULL ORDER BY name DESC`,
    },
    { op: 'query', query: `SELECT COUNT(*) FROM ${DS}.all_types WHERE score < 0 OR active = TRUE` },
    { op: 'query', query: `SELECT id FROM ${DS}.all_types ORDER BY id LIMIT 1 OFFSET 1` },
    {
      op: 'query',
      query: `SELECT id AS k, name FROM ${DS}.all_types WHERE name IS NOT NULL ORDER BY k DESC`,
    },
    {
      op: 'query',
      query: `SELECT id FROM ${DS}.all_types WHERE id IN (@a, @b) AND ts > TIMESTAMP '2020-01-01T00:00:00Z'`,
      params: { a: 1, b: 3 },
    },
    {
      op: 'query',
      query: `SELECT id FROM ${DS}.all_types WHERE day = DATE '2023-01-01' AND name LIKE 'Oct%'`,
    },
  ]);
  expect(results.map((r) => ok(r))).toEqual([
    [
      { n: 3, name: 'Zed' },
      { n: 1, name: 'Octavia' },
    ],
    [{ f0_: 2 }],
    [{ id: 2 }],
    [
      { k: 3, name: 'Zed' },
      { k: 1, name: 'Octavia' },
    ],
    [{ id: 1 }],
    [{ id: 1 }],
  ]);
});

test('anything outside the subset is refused with invalidQuery', async () => {
  const results = await bigQueryCalls(emu, [
    { op: 'query', query: `UPDATE ${DS}.all_types SET name = 'x' WHERE true` },
    { op: 'query', query: `SELECT nope FROM ${DS}.all_types` },
    { op: 'query', query: `SELECT MAX(id) FROM ${DS}.all_types` },
    { op: 'query', query: `SELECT id FROM ${DS}.missing` },
  ]);
  expect(results.slice(0, 3)).toEqual(
    [0, 1, 2].map(() => ({ error: expect.objectContaining({ code: 400, reasons: ['invalidQuery'] }) })),
  );
  expect(results[3]).toMatchObject({ error: { code: 404, reasons: ['notFound'] } });
});

test('BIGQUERY_EMULATOR_HOST works like apiEndpoint; schema patches add columns only', async () => {
  const a = { name: 'a', type: 'STRING' };
  const b = { name: 'b', type: 'INTEGER' };
  const patch = (...schema: unknown[]) => ({
    op: 'setMetadata' as const,
    dataset: DS,
    table: 'env',
    metadata: { schema },
  });
  const results = await bigQueryCalls(
    emu,
    [
      { op: 'createTable', dataset: DS, table: 'env', options: { schema: [a] } },
      patch(a, b),
      patch(b),
      patch(a, b, { name: 'c', type: 'STRING', mode: 'REQUIRED' }),
      { op: 'getMetadata', dataset: DS, table: 'env' },
      { op: 'deleteTable', dataset: DS, table: 'env' },
      { op: 'exists', dataset: DS, table: 'env' },
    ],
    true,
  );
  ok(results[0]);
  ok(results[1]);
  expect(results[2]).toMatchObject({ error: { code: 400 } });
  expect(results[3]).toMatchObject({ error: { code: 400 } });
  expect(
    ok<{ schema: { fields: Array<{ name: string }> } }>(results[4]).schema.fields.map((f) => f.name),
  ).toEqual(['a', 'b']);
  expect(ok(results[6])).toBe(false);
});

test('datasets: duplicate create conflicts, delete needs force when not empty', async () => {
  const results = await bigQueryCalls(emu, [
    { op: 'createDataset', dataset: DS },
    { op: 'deleteDataset', dataset: DS },
    { op: 'deleteDataset', dataset: DS, force: true },
    { op: 'getTables', dataset: DS },
  ]);
  expect(results.map((r) => ('error' in r ? r.error.code : 'ok'))).toEqual([409, 400, 'ok', 404]);
});
