/**
 * BigQuery CDC through the default stream with the unmodified managedwriter: the documented examples, the
 * `_CHANGE_SEQUENCE_NUMBER` ordering rule, remembered deletes, and the documented refusals.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { managedwriter } from '@google-cloud/bigquery-storage';
import fc from 'fast-check';
import { type BigQueryEmulator, startBigQueryEmulator } from '../../../local/emulators/bigquery/emulator';
import { compareSequenceNumbers, parseSequenceNumber } from '../../../local/emulators/bigquery/sequence';
import { bigQueryCalls, defaultJsonWriter, descriptorFor, ok, tablePath } from './fixtures';

const DS = 'cdc';
const EMPLOYEES = [
  { name: 'id', type: 'INTEGER', mode: 'REQUIRED' },
  { name: 'name', type: 'STRING' },
  { name: 'salary', type: 'INTEGER' },
];

let emu: BigQueryEmulator;
let client: managedwriter.WriterClient;

async function cdcTable(table: string, primaryKey: string[] | null = ['id']): Promise<string> {
  const options = {
    schema: EMPLOYEES,
    ...(primaryKey
      ? { tableConstraints: { primaryKey: { columns: primaryKey } }, clustering: { fields: primaryKey } }
      : {}),
  };
  ok((await bigQueryCalls(emu, [{ op: 'createTable', dataset: DS, table, options }]))[0]);
  return tablePath(emu, DS, table);
}

function applied(table: string): Array<[number, string | null, number | null]> {
  return emu.admin
    .tableRows(DS, table)
    .map(
      (r) =>
        [Number(r.id), r.name as string | null, r.salary === null ? null : Number(r.salary)] as [
          number,
          string | null,
          number | null,
        ],
    )
    .sort((a, b) => a[0] - b[0]);
}

beforeAll(async () => {
  emu = await startBigQueryEmulator({});
  ok((await bigQueryCalls(emu, [{ op: 'createDataset', dataset: DS }]))[0]);
  client = emu.writerClient();
});
afterAll(() => emu.stop());

test('the documented example: DELETE 100, UPSERT 101 and 105 over rows 100-102', async () => {
  const parent = await cdcTable('employees');
  const plain = await defaultJsonWriter(client, parent);
  await plain.writer
    .appendRows([
      { id: 100, name: 'Cruz', salary: 5000 },
      { id: 101, name: 'Tal', salary: 7000 },
      { id: 102, name: 'Izumi', salary: 6000 },
    ])
    .getResult();
  plain.writer.close();
  const { writer } = await defaultJsonWriter(client, parent, 'type');
  const res = await writer
    .appendRows([
      { id: 100, _CHANGE_TYPE: 'DELETE' },
      { id: 101, name: 'Tal', salary: 8000, _CHANGE_TYPE: 'UPSERT' },
      { id: 105, name: 'Izumi', salary: 6000, _CHANGE_TYPE: 'UPSERT' },
    ])
    .getResult();
  expect(res.error).toBeFalsy();
  expect(applied('employees')).toEqual([
    [101, 'Tal', 8000],
    [102, 'Izumi', 6000],
    [105, 'Izumi', 6000],
  ]);
  const [count, rows, hidden] = await bigQueryCalls(emu, [
    { op: 'query', query: `SELECT COUNT(*) AS n FROM ${DS}.employees` },
    {
      op: 'query',
      query: `SELECT id, salary FROM ${DS}.employees WHERE salary >= 6000 ORDER BY id DESC LIMIT 2`,
    },
    { op: 'query', query: `SELECT _CHANGE_TYPE FROM ${DS}.employees` },
  ]);
  expect(ok(count)).toEqual([{ n: 3 }]);
  expect(ok(rows)).toEqual([
    { id: 105, salary: 6000 },
    { id: 102, salary: 6000 },
  ]);
  expect(hidden).toMatchObject({ error: { code: 400, reasons: ['invalidQuery'] } });
  writer.close();
});

test('the larger _CHANGE_SEQUENCE_NUMBER wins whatever the arrival order (documented examples)', async () => {
  const parent = await cdcTable('ordering');
  const { writer } = await defaultJsonWriter(client, parent, 'full');
  const pairs: Array<[string, string]> = [
    ['7B', '77'],
    ['FFF/ABC', 'FFF/B'],
    ['ABC', 'BA/FFFFFFFF'],
    ['FFF/ABC', 'ABC'],
  ];
  for (const [i, [larger, smaller]] of pairs.entries()) {
    await writer
      .appendRows([{ id: i, name: `new`, _CHANGE_TYPE: 'UPSERT', _CHANGE_SEQUENCE_NUMBER: larger }])
      .getResult();
    await writer
      .appendRows([{ id: i, name: `old`, _CHANGE_TYPE: 'UPSERT', _CHANGE_SEQUENCE_NUMBER: smaller }])
      .getResult();
  }
  expect(applied('ordering').map((r) => r[1])).toEqual(['new', 'new', 'new', 'new']);
  // Equal numbers: the later ingestion wins; case does not matter.
  await writer
    .appendRows([{ id: 9, name: 'first', _CHANGE_TYPE: 'UPSERT', _CHANGE_SEQUENCE_NUMBER: 'abc/1' }])
    .getResult();
  await writer
    .appendRows([{ id: 9, name: 'second', _CHANGE_TYPE: 'UPSERT', _CHANGE_SEQUENCE_NUMBER: 'ABC/1' }])
    .getResult();
  expect(applied('ordering').find((r) => r[0] === 9)?.[1]).toBe('second');
  writer.close();
});

test('a delete is remembered: an older late upsert does not resurrect the row', async () => {
  const parent = await cdcTable('tombstones');
  const { writer } = await defaultJsonWriter(client, parent, 'full');
  await writer
    .appendRows([{ id: 1, name: 'v2', _CHANGE_TYPE: 'UPSERT', _CHANGE_SEQUENCE_NUMBER: '20' }])
    .getResult();
  await writer.appendRows([{ id: 1, _CHANGE_TYPE: 'DELETE', _CHANGE_SEQUENCE_NUMBER: '30' }]).getResult();
  await writer
    .appendRows([{ id: 1, name: 'v1', _CHANGE_TYPE: 'UPSERT', _CHANGE_SEQUENCE_NUMBER: '10' }])
    .getResult();
  expect(applied('tombstones')).toEqual([]);
  await writer
    .appendRows([{ id: 1, name: 'v4', _CHANGE_TYPE: 'UPSERT', _CHANGE_SEQUENCE_NUMBER: '40' }])
    .getResult();
  expect(applied('tombstones')).toEqual([[1, 'v4', null]]);
  const history = emu.admin.ingestionHistory(DS, 'tombstones');
  expect(history.map((h) => [h.changeType, h.sequenceNumber, h.applied])).toEqual([
    ['UPSERT', '20', true],
    ['DELETE', '30', true],
    ['UPSERT', '10', false],
    ['UPSERT', '40', true],
  ]);
  writer.close();
});

test('refusals: mixing on a connection, no primary key, explicit streams, malformed sequence numbers', async () => {
  const parent = await cdcTable('refusals');
  const { writer } = await defaultJsonWriter(client, parent, 'full');
  await writer.appendRows([{ id: 1, _CHANGE_TYPE: 'UPSERT', _CHANGE_SEQUENCE_NUMBER: '1' }]).getResult();
  const mixed = await writer
    .appendRows([{ id: 2, _CHANGE_TYPE: 'INSERT', _CHANGE_SEQUENCE_NUMBER: '1' }])
    .getResult();
  expect(mixed.error?.message).toMatch(/not a valid CHANGE_TYPE/);
  const malformed = await writer
    .appendRows([{ id: 3, _CHANGE_TYPE: 'UPSERT', _CHANGE_SEQUENCE_NUMBER: '1/2/3/4/5' }])
    .getResult();
  expect(malformed.rowErrors?.map((e) => Number(e.index))).toEqual([0]);
  writer.close();

  const noKey = await cdcTable('no_key', null);
  const nk = await defaultJsonWriter(client, noKey, 'full');
  const refused = await nk.writer
    .appendRows([{ id: 1, _CHANGE_TYPE: 'UPSERT', _CHANGE_SEQUENCE_NUMBER: '1' }])
    .getResult();
  expect(refused.error?.code).toBe(3);
  nk.writer.close();

  const streamId = await client.createWriteStream({
    streamType: managedwriter.CommittedStream,
    destinationTable: parent,
  });
  const connection = await client.createStreamConnection({ streamId });
  connection.onConnectionError(() => undefined);
  const explicit = new managedwriter.JSONWriter({
    connection,
    protoDescriptor: await descriptorFor(client, parent, 'full'),
  });
  const inInsertMode = await explicit
    .appendRows([{ id: 4, _CHANGE_TYPE: 'UPSERT', _CHANGE_SEQUENCE_NUMBER: '1' }])
    .getResult();
  expect(inInsertMode.error?.message).toMatch(/not a valid CHANGE_TYPE in insert mode: UPSERT/);
  explicit.close();
  expect(applied('refusals')).toEqual([[1, null, null]]);
  expect(applied('no_key')).toEqual([]);
});

const section = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
const sequence = fc.array(section, { minLength: 1, maxLength: 4 });
const text = (s: bigint[]) => s.map((x) => x.toString(16)).join('/');

test('sequence numbers compare section by section as unsigned numbers', () => {
  fc.assert(
    fc.property(sequence, sequence, (a, b) => {
      const cmp = compareSequenceNumbers(parseSequenceNumber(text(a))!, parseSequenceNumber(text(b))!);
      const pad = (s: bigint[]) => [...s, 0n, 0n, 0n].slice(0, 4);
      const expected = pad(a).findIndex((x, i) => x !== pad(b)[i]);
      const want = expected < 0 ? 0 : pad(a)[expected]! < pad(b)[expected]! ? -1 : 1;
      expect(cmp).toBe(want);
      expect(compareSequenceNumbers(parseSequenceNumber(text(b))!, parseSequenceNumber(text(a))!)).toBe(
        -want || 0,
      );
    }),
  );
  expect(parseSequenceNumber('0'.repeat(17))).toBeUndefined();
  expect(parseSequenceNumber('G')).toBeUndefined();
  expect(parseSequenceNumber('')).toBeUndefined();
});
