/**
 * What an exactly-once writer relies on, through the unmodified managedwriter: a committed stream's offsets
 * across reconnects (a new connection continues where the stream ends, whoever wrote last), what
 * GetWriteStream shows after a reconnect (the v1 WriteStream has no row count), FinalizeWriteStream as the
 * one place a row count comes from (also when asked again), the CreateWriteStream quota, and an expired
 * stream answering NOT_FOUND while its rows stay in the table.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { managedwriter, protos } from '@google-cloud/bigquery-storage';
import * as protobuf from 'protobufjs';
import 'protobufjs/ext/descriptor';
import { type BigQueryEmulator, startBigQueryEmulator } from '../../../local/emulators/bigquery/emulator';
import { parseCreateStreamQuota } from '../../../local/emulators/bigquery/stream-quota';
import { bigQueryCalls, createWriteTable, descriptorFor, ok } from './fixtures';

const { Writer, CommittedStream } = managedwriter;
const DS = 'state';

let emu: BigQueryEmulator;
let client: managedwriter.WriterClient;
let tables = 0;

/** A new `{id, name}` table. */
async function newTable(): Promise<{ parent: string; table: string }> {
  const table = `t${++tables}`;
  return { parent: await createWriteTable(emu, DS, table), table };
}

/** A Writer on an explicit stream, with an error listener and an encoder for `{id, name}` rows. */
async function open(parent: string, streamId: string) {
  const protoDescriptor = await descriptorFor(client, parent);
  const type = (protobuf.Type as unknown as { fromDescriptor(d: unknown): protobuf.Type }).fromDescriptor(
    protoDescriptor,
  );
  const connection = await client.createStreamConnection({ streamId });
  const errors: Error[] = [];
  connection.onConnectionError((e) => errors.push(e));
  const writer = new Writer({ connection, protoDescriptor });
  const append = async (ids: number[], offset?: number) =>
    writer
      .appendRows(
        { serializedRows: ids.map((id) => Buffer.from(type.encode(type.fromObject({ id })).finish())) },
        offset,
      )
      .getResult();
  return { connection, writer, append, errors };
}

beforeAll(async () => {
  emu = await startBigQueryEmulator({ createStreamQuota: { limit: 1_000, windowMs: 3_600_000 } });
  ok((await bigQueryCalls(emu, [{ op: 'createDataset', dataset: DS }]))[0]);
  client = emu.writerClient();
});
afterAll(() => emu.stop());

test('a committed stream keeps its offsets across connections; GetWriteStream has no row count', async () => {
  const { parent, table } = await newTable();
  const streamId = await client.createWriteStream({ streamType: CommittedStream, destinationTable: parent });
  const first = await open(parent, streamId);
  expect(Number((await first.append([1, 2], 0)).appendResult?.offset?.value)).toBe(0);
  first.writer.close();
  // A second writer (as after a crash) continues at the end the first one left, not at its own idea of it.
  const second = await open(parent, streamId);
  expect((await second.append([1], 0)).error?.code).toBe(6); // ALREADY_EXISTS
  expect((await second.append([4], 3)).error?.code).toBe(11); // OUT_OF_RANGE
  expect(Number((await second.append([3], 2)).appendResult?.offset?.value)).toBe(2);
  const got = await client.getWriteStream({
    streamId,
    view: protos.google.cloud.bigquery.storage.v1.WriteStreamView.FULL,
  });
  expect(got.name).toBe(streamId);
  expect(got.type).toBe('COMMITTED');
  expect(got.commitTime).toEqual(got.createTime);
  expect(got.tableSchema?.fields?.map((f) => f.name)).toEqual(['id', 'name']);
  expect(Object.keys(got)).not.toContain('rowCount');
  expect(emu.admin.writeStreams(DS, table)).toEqual([
    { name: streamId, type: 'COMMITTED', rows: 3, finalized: false, committed: true },
  ]);
  second.writer.close();
  expect(emu.admin.tableRows(DS, table).map((r) => Number(r.id))).toEqual([1, 2, 3]);
});

test('FinalizeWriteStream gives the row count, again when repeated; appends are refused afterwards', async () => {
  const { parent } = await newTable();
  const streamId = await client.createWriteStream({ streamType: CommittedStream, destinationTable: parent });
  const w = await open(parent, streamId);
  await w.append([1, 2, 3], 0);
  w.writer.close();
  expect(Number((await client.finalizeWriteStream({ name: streamId })).rowCount)).toBe(3);
  expect(Number((await client.finalizeWriteStream({ name: streamId })).rowCount)).toBe(3);
  const late = await open(parent, streamId);
  await expect(late.append([4], 3)).rejects.toMatchObject({ code: 3 });
  expect(managedwriter.parseStorageErrors(late.errors[0] as never)[0]?.code).toBe(6); // STREAM_FINALIZED
});

test('CreateWriteStream is refused with RESOURCE_EXHAUSTED beyond the configured quota', async () => {
  const { parent } = await newTable();
  const before = emu.admin.streamsCreated();
  emu.admin.setCreateStreamQuota({ limit: before + 2, windowMs: 3_600_000 });
  await client.createWriteStream({ streamType: CommittedStream, destinationTable: parent });
  await client.createWriteStream({ streamType: CommittedStream, destinationTable: parent });
  // RESOURCE_EXHAUSTED left out of the retry codes: the generated client retries it for up to ten minutes.
  const noQuotaRetry = { retry: { retryCodes: [4, 14] } } as never;
  await expect(
    client.createWriteStream({ streamType: CommittedStream, destinationTable: parent }, noQuotaRetry),
  ).rejects.toMatchObject({ code: 8, message: expect.stringMatching(/quota/) });
  expect(emu.admin.streamsCreated()).toBe(before + 2);
  emu.admin.setCreateStreamQuota({ limit: 1_000, windowMs: 3_600_000 });
  expect(parseCreateStreamQuota('10000')).toEqual({ limit: 10_000, windowMs: 3_600_000 });
  expect(parseCreateStreamQuota('5/1000')).toEqual({ limit: 5, windowMs: 1_000 });
  expect(() => parseCreateStreamQuota('many')).toThrow(/expected <limit>/);
});

test('an expired stream answers NOT_FOUND; its rows stay in the table', async () => {
  const { parent, table } = await newTable();
  const streamId = await client.createWriteStream({ streamType: CommittedStream, destinationTable: parent });
  const w = await open(parent, streamId);
  await w.append([1], 0);
  w.writer.close();
  expect(emu.admin.expireWriteStream(streamId)).toBe(true);
  await expect(client.getWriteStream({ streamId })).rejects.toMatchObject({ code: 5 });
  await expect(client.finalizeWriteStream({ name: streamId })).rejects.toMatchObject({ code: 5 });
  const late = await open(parent, streamId);
  await expect(late.append([2], 1)).rejects.toMatchObject({ code: 5 });
  expect(emu.admin.tableRows(DS, table).map((r) => Number(r.id))).toEqual([1]);
});

test('a fault rule with a target strikes only the write streams whose name contains it', async () => {
  const a = await newTable();
  const b = await newTable();
  const streamA = await client.createWriteStream({ streamType: CommittedStream, destinationTable: a.parent });
  const streamB = await client.createWriteStream({ streamType: CommittedStream, destinationTable: b.parent });
  const rule = emu.admin.faults.add({
    method: 'AppendRows',
    times: 1,
    code: 7,
    target: `/tables/${a.table}/`,
  });
  const wb = await open(b.parent, streamB);
  expect((await wb.append([1], 0)).error).toBeFalsy();
  const wa = await open(a.parent, streamA);
  expect((await wa.append([1], 0)).error?.code).toBe(7);
  expect((await wa.append([1], 0)).error).toBeFalsy();
  expect(emu.admin.faults.list().find((r) => r.id === rule)?.fired).toBe(1);
  wa.writer.close();
  wb.writer.close();
});

test('an append rule with afterItems answers that many requests of a connection, then strikes', async () => {
  const a = await newTable();
  const streamId = await client.createWriteStream({
    streamType: CommittedStream,
    destinationTable: a.parent,
  });
  const rule = emu.admin.faults.add({
    method: 'AppendRows',
    times: 1,
    afterItems: 2,
    code: 14,
    target: `/tables/${a.table}/`,
  });
  const w = await open(a.parent, streamId);
  expect((await w.append([1], 0)).error).toBeFalsy();
  expect((await w.append([2], 1)).error).toBeFalsy();
  // UNAVAILABLE is retryable: the managedwriter rejects the append rather than answering it.
  await expect(w.append([3], 2)).rejects.toThrow(/Injected failure/);
  w.writer.close();
  // The struck append wrote nothing: sent again at the same offset (a new connection) it lands once.
  const again = await open(a.parent, streamId);
  expect((await again.append([3], 2)).error).toBeFalsy();
  again.writer.close();
  expect(emu.admin.faults.list().find((r) => r.id === rule)?.fired).toBe(1);
  expect(emu.admin.tableRows(DS, a.table).map((r) => Number(r.id))).toEqual([1, 2, 3]);
});
