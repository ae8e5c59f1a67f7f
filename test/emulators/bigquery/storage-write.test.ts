/**
 * Storage Write API through the unmodified managedwriter: JSONWriter and Writer on default, committed and
 * pending streams, offsets, exactly-once across a dropped connection, schema checks and evolution, faults.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { adapt, managedwriter } from '@google-cloud/bigquery-storage';
import * as protobuf from 'protobufjs';
import 'protobufjs/ext/descriptor';
import { type BigQueryEmulator, startBigQueryEmulator } from '../../../local/emulators/bigquery/emulator';
import {
  bigQueryCalls,
  createWriteTable,
  defaultJsonWriter,
  descriptorFor,
  ID_NAME_SCHEMA,
  ok,
} from './fixtures';

const { Writer, JSONWriter, PendingStream, CommittedStream, parseStorageErrors } = managedwriter;
const DS = 'writes';
let emu: BigQueryEmulator;
let client: managedwriter.WriterClient;

const newTable = (table: string, schema: unknown[] = ID_NAME_SCHEMA): Promise<string> =>
  createWriteTable(emu, DS, table, schema);

function ids(table: string): number[] {
  return emu.admin.tableRows(DS, table).map((r) => Number(r.id));
}

/** Serializes rows with the same descriptor the Writer sends. */
function serializer(descriptor: ReturnType<typeof adapt.convertStorageSchemaToProto2Descriptor>) {
  const t = (protobuf.Type as unknown as { fromDescriptor(d: unknown): protobuf.Type }).fromDescriptor(
    descriptor,
  );
  return (rows: Record<string, unknown>[]) =>
    rows.map((r) => Buffer.from(t.encode(t.fromObject(r)).finish()));
}

beforeAll(async () => {
  emu = await startBigQueryEmulator({ maxRequestBytes: 64 * 1024 });
  ok((await bigQueryCalls(emu, [{ op: 'createDataset', dataset: DS }]))[0]);
  client = emu.writerClient();
});
afterAll(() => emu.stop());

test('JSONWriter on the default stream: rows visible at once, no offset in the result', async () => {
  const parent = await newTable('json_default');
  const { writer, errors } = await defaultJsonWriter(client, parent);
  const res = await writer.appendRows([{ id: 1, name: 'a' }, { id: 2 }]).getResult();
  expect(res.error).toBeFalsy();
  expect(res.appendResult?.offset).toBeNull();
  expect(res.writeStream).toBe(`${parent}/streams/_default`);
  expect(emu.admin.tableRows(DS, 'json_default')).toEqual([
    { id: 1n, name: 'a' },
    { id: 2n, name: null },
  ]);
  expect(errors).toEqual([]);
  writer.close();
});

test('an offset on the default stream is refused in-band', async () => {
  const parent = await newTable('default_offset');
  const { writer } = await defaultJsonWriter(client, parent);
  const res = await writer.appendRows([{ id: 1 }], 0).getResult();
  expect(res.error?.code).toBe(3);
  expect(ids('default_offset')).toEqual([]);
  writer.close();
});

test('Writer on a committed stream: first-row offsets, ALREADY_EXISTS and OUT_OF_RANGE in-band', async () => {
  const parent = await newTable('committed');
  const protoDescriptor = await descriptorFor(client, parent);
  const encode = serializer(protoDescriptor);
  const streamId = await client.createWriteStream({ streamType: CommittedStream, destinationTable: parent });
  const connection = await client.createStreamConnection({ streamId });
  connection.onConnectionError(() => undefined);
  const writer = new Writer({ connection, protoDescriptor });
  const a = await writer.appendRows({ serializedRows: encode([{ id: 1 }, { id: 2 }]) }, 0).getResult();
  const b = await writer.appendRows({ serializedRows: encode([{ id: 3 }]) }).getResult();
  const dup = await writer.appendRows({ serializedRows: encode([{ id: 2 }]) }, 1).getResult();
  const gap = await writer.appendRows({ serializedRows: encode([{ id: 9 }]) }, 7).getResult();
  expect([a.appendResult?.offset?.value, b.appendResult?.offset?.value].map(Number)).toEqual([0, 2]);
  expect(dup.error?.code).toBe(6);
  expect(gap.error?.code).toBe(11);
  expect(ids('committed')).toEqual([1, 2, 3]);
  const stream = await client.getWriteStream({ streamId });
  expect(stream.commitTime).toEqual(stream.createTime);
  writer.close();
});

test('pending streams are invisible until committed, and a batch commit is all or none', async () => {
  const parent = await newTable('pending');
  const protoDescriptor = await descriptorFor(client, parent);
  const open = async () => {
    const s = await client.createWriteStreamFullResponse({
      streamType: PendingStream,
      destinationTable: parent,
    });
    const connection = await client.createStreamConnection({ streamId: s.name! });
    connection.onConnectionError(() => undefined);
    return { name: s.name!, connection, writer: new JSONWriter({ connection, protoDescriptor }) };
  };
  const one = await open();
  const two = await open();
  expect(
    Number((await one.writer.appendRows([{ id: 1 }, { id: 2 }], 0).getResult()).appendResult?.offset?.value),
  ).toBe(0);
  expect(Number((await two.writer.appendRows([{ id: 3 }]).getResult()).appendResult?.offset?.value)).toBe(0);
  expect(ids('pending')).toEqual([]);
  expect((await client.getWriteStream({ streamId: one.name })).commitTime).toBeFalsy();
  expect(Number((await one.connection.finalize())?.rowCount)).toBe(2);
  const refused = await client.batchCommitWriteStream({ parent, writeStreams: [one.name, two.name] });
  expect(refused.commitTime).toBeFalsy();
  expect(refused.streamErrors?.map((e) => [e.entity, e.code])).toEqual([[two.name, 'INVALID_STREAM_STATE']]);
  expect(ids('pending')).toEqual([]);
  await two.connection.finalize();
  const done = await client.batchCommitWriteStream({ parent, writeStreams: [one.name, two.name] });
  expect(done.commitTime).toBeTruthy();
  expect(done.streamErrors ?? []).toEqual([]);
  expect(ids('pending')).toEqual([1, 2, 3]);
  expect((await client.getWriteStream({ streamId: one.name })).commitTime).toBeTruthy();
  const again = await client.batchCommitWriteStream({ parent, writeStreams: [one.name] });
  expect(again.streamErrors?.[0]?.code).toBe('STREAM_ALREADY_COMMITTED');
  expect(ids('pending')).toEqual([1, 2, 3]);
});

test('appending to a finalized stream fails with STREAM_FINALIZED', async () => {
  const parent = await newTable('finalized');
  const protoDescriptor = await descriptorFor(client, parent);
  const streamId = await client.createWriteStream({ streamType: PendingStream, destinationTable: parent });
  await client.finalizeWriteStream({ name: streamId });
  const connection = await client.createStreamConnection({ streamId });
  const errors: Error[] = [];
  connection.onConnectionError((e) => errors.push(e));
  const writer = new JSONWriter({ connection, protoDescriptor });
  await expect(writer.appendRows([{ id: 1 }]).getResult()).rejects.toMatchObject({ code: 3 });
  expect(parseStorageErrors(errors[0] as never)[0]?.code).toBe(6); // STREAM_FINALIZED;
});

test('exactly-once with offsets across a dropped connection', async () => {
  const parent = await newTable('exactly_once');
  const protoDescriptor = await descriptorFor(client, parent);
  const streamId = await client.createWriteStream({ streamType: CommittedStream, destinationTable: parent });
  emu.admin.endAppendStreamAfter(2);
  let connection = await client.createStreamConnection({ streamId });
  connection.onConnectionError(() => undefined);
  let writer = new JSONWriter({ connection, protoDescriptor });
  const batches = [0, 1, 2, 3].map((b) => [{ id: b * 2 }, { id: b * 2 + 1 }]);
  const results = await Promise.allSettled(
    batches.map((rows, b) => writer.appendRows(rows, b * 2).getResult()),
  );
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected']);
  // The application replays everything it has not seen acknowledged, plus one batch it has (as after a crash).
  connection = await client.createStreamConnection({ streamId });
  connection.onConnectionError(() => undefined);
  writer = new JSONWriter({ connection, protoDescriptor });
  const replay = await Promise.all([1, 2, 3].map((b) => writer.appendRows(batches[b]!, b * 2).getResult()));
  expect(replay.map((r) => r.error?.code ?? 0)).toEqual([6, 0, 0]);
  expect(ids('exactly_once')).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  writer.close();
});

test('an extra field ends the connection with SCHEMA_MISMATCH_EXTRA_FIELDS', async () => {
  const parent = await newTable('mismatch');
  const storage = adapt.convertBigQuerySchemaToStorageTableSchema({
    fields: [...ID_NAME_SCHEMA, { name: 'extra', type: 'STRING' }],
  });
  const protoDescriptor = adapt.convertStorageSchemaToProto2Descriptor(storage, 'root');
  const connection = await client.createStreamConnection({
    streamId: managedwriter.DefaultStream,
    destinationTable: parent,
  });
  const errors: Error[] = [];
  connection.onConnectionError((e) => errors.push(e));
  const writer = new JSONWriter({ connection, protoDescriptor });
  await expect(writer.appendRows([{ id: 1, extra: 'x' }]).getResult()).rejects.toMatchObject({ code: 3 });
  expect(parseStorageErrors(errors[0] as never)[0]?.code).toBe(7); // SCHEMA_MISMATCH_EXTRA_FIELDS;
  expect(ids('mismatch')).toEqual([]);
});

test('bad values give row errors and write nothing; oversized and empty requests are refused', async () => {
  const parent = await newTable('bad_values', [...ID_NAME_SCHEMA, { name: 'doc', type: 'JSON' }]);
  const { writer } = await defaultJsonWriter(client, parent);
  const bad = await writer
    .appendRows([
      { id: 1, doc: '{}' },
      { id: 2, doc: '{not json' },
    ])
    .getResult();
  expect(bad.error?.code).toBe(3);
  expect(bad.rowErrors?.map((e) => Number(e.index))).toEqual([1]);
  const big = await writer.appendRows([{ id: 3, name: 'x'.repeat(70 * 1024) }]).getResult();
  expect(big.error?.message).toMatch(/too large/);
  expect(ids('bad_values')).toEqual([]);
  writer.close();
});

test('a table gaining a column mid-stream: the stream reports the updated schema', async () => {
  const parent = await newTable('evolving');
  const { writer, connection } = await defaultJsonWriter(client, parent);
  const updates: unknown[] = [];
  connection.onSchemaUpdated((s) => updates.push(s));
  await writer.appendRows([{ id: 1 }]).getResult();
  const patched = await bigQueryCalls(emu, [
    {
      op: 'setMetadata',
      dataset: DS,
      table: 'evolving',
      metadata: { schema: [...ID_NAME_SCHEMA, { name: 'added', type: 'STRING' }] },
    },
  ]);
  ok(patched[0]);
  const res = await writer.appendRows([{ id: 2 }]).getResult();
  expect(res.updatedSchema?.fields?.map((f) => f.name)).toEqual(['id', 'name', 'added']);
  expect(updates).toHaveLength(1);
  await writer.appendRows([{ id: 3, added: 'new' }]).getResult();
  expect(emu.admin.tableRows(DS, 'evolving').map((r) => r.added)).toEqual([null, null, 'new']);
  writer.close();
});

test('injected faults: failed appends are retried by the client, delays are honoured', async () => {
  const parent = await newTable('faults');
  const retrying = emu.writerClient();
  retrying.enableWriteRetries(true);
  const { writer } = await defaultJsonWriter(retrying, parent);
  emu.admin.failNextAppends(2, 14, 'backend unavailable');
  const res = await writer.appendRows([{ id: 1 }]).getResult();
  expect(res.error).toBeFalsy();
  emu.admin.failNextAppends(1, 7, 'denied');
  const denied = await writer.appendRows([{ id: 2 }]).getResult();
  expect(denied.error?.code).toBe(7);
  emu.admin.delayAppends(200, 1);
  const started = Date.now();
  await writer.appendRows([{ id: 3 }]).getResult();
  expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  expect(ids('faults')).toEqual([1, 3]);
  emu.admin.clearFaults();
  writer.close();
});

test('buffered streams show rows up to the flushed offset', async () => {
  const parent = await newTable('buffered');
  const protoDescriptor = await descriptorFor(client, parent);
  const streamId = await client.createWriteStream({
    streamType: managedwriter.BufferedStream,
    destinationTable: parent,
  });
  const connection = await client.createStreamConnection({ streamId });
  connection.onConnectionError(() => undefined);
  const writer = new JSONWriter({ connection, protoDescriptor });
  await writer.appendRows([{ id: 1 }, { id: 2 }, { id: 3 }], 0).getResult();
  expect(ids('buffered')).toEqual([]);
  const flushed = await connection.flushRows({ offset: 1 });
  expect(Number(flushed?.offset)).toBe(1);
  expect(ids('buffered')).toEqual([1, 2]);
  await connection.flushRows({ offset: 2 });
  expect(ids('buffered')).toEqual([1, 2, 3]);
  writer.close();
});
