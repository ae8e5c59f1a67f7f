/**
 * PartitionQuery and PartitionRead plan as many partitions as the table's data calls for, within the
 * request's hints (`max_partitions`, `partition_size_bytes`), and the partitions cover every row once.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { createTestDatabase, type TestDatabase } from '../../../local/emulators/spanner/client';
import { type RunningSpannerEmulator, startSpannerEmulator } from '../../../local/emulators/spanner/server';

let emu: RunningSpannerEmulator;
let g: TestDatabase;
const KiB = 1024;

// Setup starts an emulator and creates databases: under a loaded machine it can take longer than a test.
beforeAll(async () => {
  emu = await startSpannerEmulator({ port: 0, changeStreams: false, partitionBytes: 64 * KiB });
  g = await createTestDatabase(emu, 'GOOGLE_STANDARD_SQL', [
    'CREATE TABLE T (Id INT64 NOT NULL, Pad STRING(MAX)) PRIMARY KEY (Id)',
    'CREATE TABLE Empty (Id INT64 NOT NULL) PRIMARY KEY (Id)',
  ]);
  // 4,000 rows of about 100 bytes: about 400 KB, so about 7 partitions of 64 KiB.
  const rows = Array.from({ length: 4_000 }, (_, i) => ({
    Id: String(i * 7919 - 2_000_000),
    Pad: 'p'.repeat(96),
  }));
  for (let i = 0; i < rows.length; i += 1_000) await g.database.table('T').insert(rows.slice(i, i + 1_000));
}, 60_000);

afterAll(async () => {
  await g?.close();
  await emu?.stop();
});

async function plan(sql: string, partitionOptions?: { maxPartitions?: number; partitionSizeBytes?: number }) {
  const [txn] = await g.database.createBatchTransaction({ strong: true });
  // `partitionOptions` is passed through to PartitionQuery, though the client's request type omits it.
  const request = { sql, ...(partitionOptions ? { partitionOptions } : {}) };
  const [partitions] = await txn.createQueryPartitions(request);
  const ids: string[] = [];
  for (const p of partitions) {
    const [rows] = await txn.execute(p);
    ids.push(
      ...rows.map((r) => String((r.toJSON({ wrapNumbers: true }) as { Id: { value: string } }).Id.value)),
    );
  }
  txn.close();
  return { count: partitions.length, ids };
}

test('the partition count follows the data, and the partitions cover every row exactly once', async () => {
  const { count, ids } = await plan('SELECT Id, Pad FROM T');
  expect(count).toBeGreaterThanOrEqual(6);
  expect(count).toBeLessThanOrEqual(8);
  expect(ids).toHaveLength(4_000);
  expect(new Set(ids).size).toBe(4_000);
});

test('partition_size_bytes and max_partitions are honoured as hints', async () => {
  expect((await plan('SELECT Id FROM T', { partitionSizeBytes: 16 * KiB })).count).toBeGreaterThanOrEqual(24);
  const capped = await plan('SELECT Id FROM T', { partitionSizeBytes: 16 * KiB, maxPartitions: 5 });
  expect(capped.count).toBe(5);
  expect(new Set(capped.ids).size).toBe(4_000);
  expect((await plan('SELECT Id FROM T', { partitionSizeBytes: 1024 * KiB })).count).toBe(1);
});

test('an empty table has one (empty) partition; PartitionRead plans the same way', async () => {
  expect(await plan('SELECT Id FROM Empty')).toEqual({ count: 1, ids: [] });
  const [txn] = await g.database.createBatchTransaction({ strong: true });
  const [partitions] = await txn.createReadPartitions({ table: 'T', keySet: { all: true }, columns: ['Id'] });
  expect(partitions.length).toBeGreaterThan(1);
  let rows = 0;
  for (const p of partitions) {
    const [read] = await txn.read('T', p);
    rows += read.length;
  }
  expect(rows).toBe(4_000);
  txn.close();
});
