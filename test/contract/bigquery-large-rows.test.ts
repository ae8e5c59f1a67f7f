/**
 * Large batches and large rows on the BigQuery sinks (emulator, official clients): a batch larger than an
 * AppendRows request is split across requests, in order, and all of it lands; a single row larger than any
 * request may carry is a permanent UnrepresentableError naming the table, and nothing of its batch is sent.
 */
process.env.METADATA_SERVER_DETECTION = 'none';
delete process.env.BIGQUERY_EMULATOR_HOST;

import { type BigQueryEmulator, startBigQueryEmulator } from '../../local/emulators/bigquery/emulator';
import { BigQueryReplicaSink } from '../../shared/adapters/bigquery/replica-sink';
import { encodeChangeSequenceNumber } from '../../shared/domain/cdc-sequence';
import { UnrepresentableError } from '../../shared/domain/record-errors';
import type { ReplicaUpsert } from '../../shared/domain/replica-rows';
import { fromNanos } from '../../shared/domain/timestamp';

const PROJECT = 'test-project';
const MiB = 1024 * 1024;
let emu: BigQueryEmulator;
let n = 0;

beforeAll(async () => {
  // The emulator refuses requests over 2 MiB, so only split batches can land.
  emu = await startBigQueryEmulator({
    grpcPort: 0,
    restPort: 0,
    projectId: PROJECT,
    maxRequestBytes: 2 * MiB,
  });
});

afterAll(async () => {
  await emu?.stop();
});

const table = {
  name: 'Big',
  columns: [
    { name: 'Id', type: { code: 'INT64' }, nullable: false, ordinalPosition: 1 },
    { name: 'Blob', type: { code: 'BYTES' }, nullable: true, ordinalPosition: 2 },
  ],
  primaryKey: ['Id'],
};

function upsert(id: number, bytes: number): ReplicaUpsert {
  return {
    kind: 'upsert',
    table: 'Big',
    commitTimestamp: fromNanos(1_700_000_000_000_000_000n),
    key: { Id: String(id) },
    sequence: encodeChangeSequenceNumber({
      commitTimestamp: fromNanos(1_700_000_000_000_000_000n),
      recordSequence: String(id),
      modIndex: 0,
    }),
    row: { Id: String(id), Blob: Buffer.alloc(bytes, id % 256).toString('base64') },
  };
}

async function sinks(limits: { maxRequestBytes?: number; maxRowBytes?: number }) {
  const dataset = `large_${++n}`;
  const bigquery = emu.bigquery();
  await bigquery.createDataset(dataset);
  const clients = { bigquery, writer: emu.writerClient() };
  const replica = new BigQueryReplicaSink(clients, { projectId: PROJECT, dataset, limits });
  await replica.ensureTable('big', table, 'all');
  return { dataset, replica };
}

test('a batch larger than a request is split across requests and lands whole', async () => {
  const { dataset, replica } = await sinks({ maxRequestBytes: MiB });
  // 24 rows of 300 KiB: about 7 MiB, more than three times what one request may carry.
  await replica.write(
    'big',
    Array.from({ length: 24 }, (_, i) => upsert(i, 300 * 1024)),
  );
  const rows = emu.admin.tableRows(dataset, 'big');
  expect(rows).toHaveLength(24);
  expect(emu.admin.ingestionHistory(dataset, 'big').length).toBe(24);
  replica.close();
});

test('without splitting, the same batch is refused by BigQuery (so the split is what made it land)', async () => {
  const { replica } = await sinks({ maxRequestBytes: 64 * MiB });
  await expect(
    replica.write(
      'big',
      Array.from({ length: 24 }, (_, i) => upsert(i, 300 * 1024)),
    ),
  ).rejects.toThrow(/too large/);
  replica.close();
});

test('a row larger than any request may carry is a permanent UnrepresentableError; nothing is sent', async () => {
  const { dataset, replica } = await sinks({ maxRequestBytes: MiB, maxRowBytes: (3 * MiB) / 2 });
  const batch = [upsert(1, 1024), upsert(2, 2 * MiB), upsert(3, 1024)];
  const error = await replica.write('big', batch).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(UnrepresentableError);
  expect(error).toMatchObject({ kind: 'permanent', reason: 'row-too-large', where: 'big', rowIndex: 1 });
  expect((error as Error).message).toMatch(
    /^big: a row is \d+ bytes serialized, more than the 1572864.*Blob/,
  );
  expect(emu.admin.tableRows(dataset, 'big')).toHaveLength(0);
  replica.close();
});
