/**
 * What the managed-writer system test of the client exercises, through the unmodified clients: column
 * defaults with missing-value interpretations, picosecond TIMESTAMP columns, RANGE columns, schemas echoed
 * as given, and the StorageError text of a writer schema with extra fields.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { adapt, managedwriter } from '@google-cloud/bigquery-storage';
import { type BigQueryEmulator, startBigQueryEmulator } from '../../../local/emulators/bigquery/emulator';
import { bigQueryCalls, ok, tablePath } from './fixtures';

const { JSONWriter, PendingStream, parseStorageErrors } = managedwriter;
const DS = 'conformance';
let emu: BigQueryEmulator;
let client: managedwriter.WriterClient;

beforeAll(async () => {
  emu = await startBigQueryEmulator({});
  ok((await bigQueryCalls(emu, [{ op: 'createDataset', dataset: DS }]))[0]);
  client = emu.writerClient();
});
afterAll(() => emu.stop());

async function table(name: string, fields: unknown[]): Promise<string> {
  ok(
    (
      await bigQueryCalls(emu, [
        { op: 'createTable', dataset: DS, table: name, options: { schema: { fields } } },
      ])
    )[0],
  );
  return tablePath(emu, DS, name);
}

function descriptor(fields: unknown[]) {
  const storage = adapt.convertBigQuerySchemaToStorageTableSchema({ fields } as never);
  return adapt.convertStorageSchemaToProto2Descriptor(storage, 'root');
}

test('defaults fill missing values only where DEFAULT_VALUE is asked for', async () => {
  const fields = [
    { name: 'row_num', type: 'INTEGER', mode: 'REQUIRED' },
    { name: 'id', type: 'STRING', mode: 'REQUIRED', defaultValueExpression: 'GENERATE_UUID()' },
    { name: 'created_at', type: 'TIMESTAMP', defaultValueExpression: 'CURRENT_TIMESTAMP()' },
    { name: 'label', type: 'STRING', defaultValueExpression: "'none'" },
  ];
  const parent = await table('defaults', fields);
  const connection = await client.createStreamConnection({
    streamType: PendingStream,
    destinationTable: parent,
  });
  const writer = new JSONWriter({
    connection,
    protoDescriptor: descriptor(fields),
    defaultMissingValueInterpretation: 'DEFAULT_VALUE',
    missingValueInterpretations: { label: 'NULL_VALUE' },
  });
  expect((await writer.appendRows([{ row_num: 1 }], 0).getResult()).error).toBeFalsy();
  writer.setDefaultMissingValueInterpretation('NULL_VALUE');
  writer.setMissingValueInterpretations({ id: 'DEFAULT_VALUE', label: 'DEFAULT_VALUE' });
  expect((await writer.appendRows([{ row_num: 2 }], 1).getResult()).error).toBeFalsy();
  writer.setMissingValueInterpretations({});
  const missingRequired = await writer.appendRows([{ row_num: 3 }], 2).getResult();
  expect(missingRequired.error?.message).toMatch(/^Errors found while processing rows/);
  await connection.finalize();
  await client.batchCommitWriteStream({ parent, writeStreams: [connection.getStreamId()] });
  const [first, second] = emu.admin.tableRows(DS, 'defaults');
  expect(first).toMatchObject({ row_num: 1n, label: null });
  expect(String(first?.id)).toMatch(/^[0-9a-f-]{36}$/);
  expect(typeof first?.created_at).toBe('bigint');
  expect(second).toMatchObject({ row_num: 2n, created_at: null, label: 'none' });
  const bad = await bigQueryCalls(emu, [
    {
      op: 'createTable',
      dataset: DS,
      table: 'bad_default',
      options: {
        schema: { fields: [{ name: 'x', type: 'STRING', defaultValueExpression: 'SESSION_USER() || "x"' }] },
      },
    },
  ]);
  expect(bad[0]).toMatchObject({ error: { code: 400 } });
  writer.close();
});

test('picosecond TIMESTAMP columns keep twelve fractional digits', async () => {
  const fields = [
    { name: 'n', type: 'INTEGER', mode: 'REQUIRED' },
    { name: 'at', type: 'TIMESTAMP', timestampPrecision: 12 },
  ];
  const parent = await table('picos', fields);
  const connection = await client.createStreamConnection({
    streamType: PendingStream,
    destinationTable: parent,
  });
  const writer = new JSONWriter({ connection, protoDescriptor: descriptor(fields) });
  const at = '2023-01-01T12:00:00.123456789123Z';
  expect((await writer.appendRows([{ n: 1, at }], 0).getResult()).error).toBeFalsy();
  await connection.finalize();
  await client.batchCommitWriteStream({ parent, writeStreams: [connection.getStreamId()] });
  const [iso, micros] = await bigQueryCalls(emu, [
    {
      op: 'tabledata',
      dataset: DS,
      table: 'picos',
      qs: { 'formatOptions.timestampOutputFormat': 'ISO8601_STRING' },
    },
    { op: 'tabledata', dataset: DS, table: 'picos', qs: { 'formatOptions.useInt64Timestamp': true } },
  ]);
  expect(ok<{ rows: Array<{ f: Array<{ v: string }> }> }>(iso).rows[0]?.f[1]?.v).toBe(at);
  expect(ok<{ rows: Array<{ f: Array<{ v: string }> }> }>(micros).rows[0]?.f[1]?.v).toBe('1672574400123456');
  const [meta] = await bigQueryCalls(emu, [{ op: 'getMetadata', dataset: DS, table: 'picos' }]);
  expect(ok<{ schema: { fields: unknown[] } }>(meta).schema.fields[1]).toEqual({
    name: 'at',
    type: 'TIMESTAMP',
    timestampPrecision: '12',
  });
  writer.close();
});

test('RANGE columns: written as {start, end}, read as [start, end)', async () => {
  const fields = [
    { name: 'n', type: 'INTEGER', mode: 'REQUIRED' },
    { name: 'span', type: 'RANGE', rangeElementType: { type: 'DATE' } },
  ];
  const parent = await table('ranges', fields);
  const connection = await client.createStreamConnection({
    streamType: PendingStream,
    destinationTable: parent,
  });
  const writer = new JSONWriter({ connection, protoDescriptor: descriptor(fields) });
  // The JSON writer turns Date objects (not strings) into DATE's days since the epoch.
  const rows = [
    { n: 1, span: { start: new Date('2024-01-01'), end: new Date('2024-02-01') } },
    { n: 2, span: { end: new Date('2024-03-01') } },
  ] as unknown as Parameters<managedwriter.JSONWriter['appendRows']>[0];
  expect((await writer.appendRows(rows, 0).getResult()).error).toBeFalsy();
  await connection.finalize();
  await client.batchCommitWriteStream({ parent, writeStreams: [connection.getStreamId()] });
  const [raw] = await bigQueryCalls(emu, [{ op: 'tabledata', dataset: DS, table: 'ranges', qs: {} }]);
  const cells = ok<{ rows: Array<{ f: Array<{ v: string }> }> }>(raw).rows.map((r) => r.f[1]?.v);
  expect(cells).toEqual(['[2024-01-01, 2024-02-01)', '[UNBOUNDED, 2024-03-01)']);
  const noElement = await bigQueryCalls(emu, [
    {
      op: 'createTable',
      dataset: DS,
      table: 'bad_range',
      options: { schema: { fields: [{ name: 'r', type: 'RANGE' }] } },
    },
  ]);
  expect(noElement[0]).toMatchObject({ error: { code: 400 } });
  writer.close();
});

test("DATETIME comes back in the service's form, a DATE may be sent as int64 days, bad values are row errors", async () => {
  const fields = [
    { name: 'n', type: 'INTEGER', mode: 'REQUIRED' },
    { name: 'day', type: 'DATE' },
    { name: 'local', type: 'DATETIME' },
  ];
  const parent = await table('civil', fields);
  // A proto that declares the DATE column int64 (as the client's sample stubs do) sends days as an int64.
  const protoDescriptor = descriptor(fields);
  const day = protoDescriptor.field?.find((f) => f.name === 'day');
  if (day) day.type = 3; // TYPE_INT64
  const connection = await client.createStreamConnection({
    streamType: PendingStream,
    destinationTable: parent,
  });
  const writer = new JSONWriter({ connection, protoDescriptor });
  const good: Array<Record<string, number | string>> = [
    { n: 1, day: 17934, local: '2019-02-17 11:24:00.000' },
    { n: 2, local: '2019-02-17T11:24:00.500' },
    { n: 3, local: '2019-02-17' },
  ];
  expect((await writer.appendRows(good, 0).getResult()).error).toBeFalsy();
  const bad = await writer.appendRows([{ n: 4, local: '2019-02-30 10:00:00' }], 3).getResult();
  expect(bad.rowErrors?.[0]?.message).toMatch(/Invalid DATETIME value for field local: 2019-02-30 10:00:00/);
  await connection.finalize();
  await client.batchCommitWriteStream({ parent, writeStreams: [connection.getStreamId()] });
  const [raw] = await bigQueryCalls(emu, [{ op: 'tabledata', dataset: DS, table: 'civil', qs: {} }]);
  const cells = ok<{ rows: Array<{ f: Array<{ v: string | null }> }> }>(raw).rows.map((r) => [
    r.f[1]?.v,
    r.f[2]?.v,
  ]);
  expect(cells).toEqual([
    ['2019-02-07', '2019-02-17T11:24:00'],
    [null, '2019-02-17T11:24:00.5'],
    [null, '2019-02-17T00:00:00'],
  ]);
  writer.close();
});

test('schemas come back as given, and an extra writer field is the StorageError the client compares', async () => {
  const fields = [
    { name: 'customer_name', type: 'STRING', mode: 'REQUIRED' },
    { name: 'row_num', type: 'INTEGER', mode: 'REQUIRED' },
  ];
  const parent = await table('echo', fields);
  const updated = [...fields, { name: 'customer_email', type: 'STRING' }];
  const [md] = await bigQueryCalls(emu, [
    { op: 'setMetadata', dataset: DS, table: 'echo', metadata: { schema: { fields: updated } } },
  ]);
  expect(ok<{ schema: unknown }>(md).schema).toEqual({ fields: updated });
  const connection = await client.createStreamConnection({
    streamType: PendingStream,
    destinationTable: parent,
  });
  const errors: Array<ReturnType<typeof parseStorageErrors>> = [];
  connection.onConnectionError((err) => errors.push(parseStorageErrors(err as never)));
  const wrong = descriptor([...updated, { name: 'extra', type: 'STRING' }]);
  const writer = new JSONWriter({ connection, protoDescriptor: wrong });
  await writer
    .appendRows([{ customer_name: 'a', row_num: 1, extra: 'x' }], 0)
    .getResult()
    .catch(() => undefined);
  await new Promise((r) => setTimeout(r, 100));
  expect(errors.flat().map((e) => e.errorMessage)).toEqual([
    'Schema mismatch due to extra fields in user schema',
  ]);
  writer.close();
});
