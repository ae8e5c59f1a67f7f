/**
 * What only the BigQuery history and completeness sinks do, on the emulator through the official clients:
 * the CreateWriteStream quota answered at once (not retried for ten minutes), a schema change noticed on a
 * stream's connection (so the application rotates the stream), tables made by an earlier version brought up
 * to date (history columns added; the completeness table re-keyed by source and destination).
 */
process.env.METADATA_SERVER_DETECTION = 'none';
delete process.env.BIGQUERY_EMULATOR_HOST;

import type { BigQuery } from '@google-cloud/bigquery';
import { BigQueryCompletenessSink } from '../../shared/adapters/bigquery/completeness-sink';
import { BigQueryHistorySink } from '../../shared/adapters/bigquery/history-sink';
import { classifyError } from '../../shared/domain/errors';
import { HISTORY_TABLE_FIELDS } from '../../shared/domain/history-rows';
import { bigQueryEmulatorForFile } from '../emulators/bigquery/support/emulator-for-file';
import { rowsOf } from './history-sink.contract';
import { at } from './sinks.contract';

const PROJECT = 'test-project';
const bq = bigQueryEmulatorForFile(PROJECT);

const fresh = () => bq.freshHistory('hist');

it('answers CreateWriteStream beyond the quota at once, as a rate-limited retryable failure', async () => {
  const { history } = await fresh();
  await history.ensureTable('h');
  const made = bq.emu.admin.streamsCreated();
  bq.emu.admin.setCreateStreamQuota({ limit: made + 1, windowMs: 3_600_000 });
  try {
    await history.createStream('h', 'committed');
    const started = Date.now();
    const err = await history.createStream('h', 'committed').catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(err).toMatchObject({ code: 8 });
    expect(classifyError(err)).toBe('retryable');
  } finally {
    bq.emu.admin.setCreateStreamQuota({ limit: 10_000, windowMs: 3_600_000 });
    history.close();
  }
});

async function addColumn(bigquery: BigQuery, dataset: string, name: string) {
  const table = bigquery.dataset(dataset).table('h');
  const [m] = await table.getMetadata();
  await table.setMetadata({
    schema: { fields: [...m.schema.fields, { name, type: 'STRING', mode: 'NULLABLE' }] },
  });
}

it('notices a column added to the table on an open connection, so the stream can be replaced', async () => {
  const { history, bigquery, dataset } = await fresh();
  await history.ensureTable('h');
  const s = await history.createStream('h', 'committed');
  const before = await history.tableSchema('h');
  expect(s.schema).toBe(before);
  expect(await history.appendAt('h', s.name, 0, rowsOf(1))).toEqual({ kind: 'appended' });
  await addColumn(bigquery, dataset, 'added_later');
  // The answer carries updated_schema.
  expect(await history.appendAt('h', s.name, 1, rowsOf(1, 1))).toEqual({ kind: 'appended' });
  const after = await history.tableSchema('h');
  expect(after).not.toBe(before);
  const next = await history.createStream('h', 'committed');
  expect(next.schema).toBe(after);
  history.close();
});

it('reads the table schema again once its read is older than the configured time', async () => {
  const { bigquery, dataset, clients } = await fresh();
  const history = new BigQueryHistorySink(clients, { projectId: PROJECT, dataset, schemaTtlMs: 0 });
  await history.ensureTable('h');
  const before = await history.tableSchema('h');
  await addColumn(bigquery, dataset, 'added_later');
  expect(await history.tableSchema('h')).not.toBe(before);
  history.close();
});

it('adds the history columns a table made by an earlier version lacks', async () => {
  const { history, bigquery, dataset } = await fresh();
  const older = HISTORY_TABLE_FIELDS.filter((f) => f.name !== 'transaction_tag');
  await bigquery.dataset(dataset).createTable('h', { schema: { fields: older.map((f) => ({ ...f })) } });
  await history.ensureTable('h');
  const [m] = await bigquery.dataset(dataset).table('h').getMetadata();
  expect((m.schema.fields as Array<{ name: string }>).map((f) => f.name)).toContain('transaction_tag');
  const s = await history.createStream('h', 'committed');
  expect(await history.appendAt('h', s.name, 0, rowsOf(2))).toEqual({ kind: 'appended' });
  history.close();
});

it('re-creates a completeness table keyed by source table alone with the (source, destination) key', async () => {
  const { bigquery, dataset, clients } = await fresh();
  await bigquery.dataset(dataset).createTable('_sluice_completeness', {
    schema: {
      fields: [
        { name: 'source_table', type: 'STRING', mode: 'REQUIRED' },
        { name: 'destination', type: 'STRING', mode: 'NULLABLE' },
        { name: 'watermark', type: 'TIMESTAMP', mode: 'REQUIRED' },
        { name: 'watermark_ns', type: 'STRING', mode: 'REQUIRED' },
        { name: 'updated_at', type: 'TIMESTAMP', mode: 'REQUIRED' },
      ],
    },
    tableConstraints: { primaryKey: { columns: ['source_table'] } },
  });
  const notices: string[] = [];
  const sink = new BigQueryCompletenessSink(clients, {
    projectId: PROJECT,
    dataset,
    log: (event) => notices.push(event),
  });
  await sink.record([
    { sourceTable: 'Singers', destination: 'singers', watermark: at(5) },
    { sourceTable: 'Singers', destination: 'singers_history', watermark: at(5) },
  ]);
  const [m] = await bigquery.dataset(dataset).table('_sluice_completeness').getMetadata();
  expect(m.tableConstraints.primaryKey.columns).toEqual(['source_table', 'destination']);
  expect(notices).toEqual(['completeness.recreated']);
  const rows = bq.emu.admin.tableRows(dataset, '_sluice_completeness').map((r) => r.destination);
  expect(rows.sort()).toEqual(['singers', 'singers_history']);
  sink.close();
});

it('reads a FinalizeWriteStream answer without a row count as 0 (proto3 gives the field no presence)', async () => {
  // So 0 means "none, or not reported": HistoryStreams takes a 0 below the ledger's count as unknown.
  const { history } = await fresh();
  await history.ensureTable('h');
  const s = await history.createStream('h', 'committed');
  expect(await history.appendAt('h', s.name, 0, rowsOf(3))).toEqual({ kind: 'appended' });
  const rule = bq.emu.admin.faults.add({ method: 'FinalizeWriteStream', times: 1, omit: ['rowCount'] });
  try {
    expect(await history.finalizeStream('h', s.name)).toBe(0);
    // Answered with the count again, it is the count.
    expect(await history.finalizeStream('h', s.name)).toBe(3);
  } finally {
    bq.emu.admin.faults.clear(rule);
    history.close();
  }
});

it('dates a stream whose CreateWriteStream answer has no creation time by its own clock, not the epoch', async () => {
  const { history } = await fresh();
  await history.ensureTable('h');
  const rule = bq.emu.admin.faults.add({ method: 'CreateWriteStream', times: 1, omit: ['createTime'] });
  try {
    const before = BigInt(Date.now()) * 1_000_000n;
    const s = await history.createStream('h', 'committed');
    expect(BigInt(s.createdAt)).toBeGreaterThanOrEqual(before);
    expect(BigInt(s.createdAt)).toBeLessThanOrEqual(BigInt(Date.now()) * 1_000_000n);
  } finally {
    bq.emu.admin.faults.clear(rule);
    history.close();
  }
});

it('refuses a table patch whose If-Match etag another change made stale, with 412, as BigQuery does', async () => {
  const { bigquery, dataset } = await fresh();
  const [table] = await bigquery
    .dataset(dataset)
    .createTable('e', { schema: { fields: [{ name: 'a', type: 'STRING' }] } });
  const [read] = await table.getMetadata();
  await table.setMetadata({ description: 'changed by another writer' });
  const stale = await table
    .setMetadata({
      schema: { fields: [...read.schema.fields, { name: 'b', type: 'STRING' }] },
      etag: read.etag,
    })
    .then(
      () => undefined,
      (e: unknown) => e as { code?: number },
    );
  expect(stale?.code).toBe(412);
  const [now] = await table.getMetadata();
  await table.setMetadata({
    schema: { fields: [...now.schema.fields, { name: 'b', type: 'STRING' }] },
    etag: now.etag,
  });
  const [after] = await table.getMetadata();
  expect((after.schema.fields as Array<{ name: string }>).map((f) => f.name)).toEqual(['a', 'b']);
});

it('adds the enriched columns two instances add to one history table at the same time: neither fails', async () => {
  const { history, clients, dataset, bigquery } = await fresh();
  const other = new BigQueryHistorySink(clients, { projectId: PROJECT, dataset });
  await history.ensureTable('shared_history');
  const column = (name: string) => [{ name, type: 'STRING' as const, mode: 'NULLABLE' as const }];
  await Promise.all([
    history.ensureTable('shared_history', column('customer_Name')),
    other.ensureTable('shared_history', column('product_Name')),
  ]);
  const [m] = await bigquery.dataset(dataset).table('shared_history').getMetadata();
  const names = (m.schema.fields as Array<{ name: string }>).map((f) => f.name);
  expect(names).toEqual(expect.arrayContaining(['customer_Name', 'product_Name']));
  history.close();
  other.close();
});

it('writes a column another instance added as soon as its own plan has it, not after the schema cache expires', async () => {
  const { history, clients, dataset, bigquery } = await fresh();
  const other = new BigQueryHistorySink(clients, { projectId: PROJECT, dataset });
  await history.ensureTable('shared_history');
  const first = await history.createStream('shared_history', 'committed');
  expect(await history.appendAt('shared_history', first.name, 0, rowsOf(1))).toEqual({ kind: 'appended' });
  const column = [{ name: 'customer_Name', type: 'STRING' as const, mode: 'NULLABLE' as const }];
  await other.ensureTable('shared_history', column);
  // This instance's schema read is seconds old (the cache keeps it 60 s); its plan now has the column too.
  await history.ensureTable('shared_history', column);
  const [row] = rowsOf(1, 1);
  const second = await history.createStream('shared_history', 'committed');
  // An enriched value rides beside the history columns, as historyRows puts it.
  const enriched = Object.assign({}, row!, { customer_Name: 'Ann' });
  const appended = await history.appendAt('shared_history', second.name, 0, [enriched]);
  expect(appended).toEqual({ kind: 'appended' });
  const [rows] = await bigquery.dataset(dataset).table('shared_history').getRows();
  expect(rows.map((r) => r.customer_Name ?? null).sort()).toEqual(['Ann', null]);
  history.close();
  other.close();
});

// The Storage Write API may answer an offset append's ALREADY_EXISTS or OUT_OF_RANGE as the status of the
// AppendRows connection rather than inside a response (bigquery-storage-write.md §2: the offset answers are
// gRPC statuses); the client then rejects the append's result. Both forms must give the same answer, or an
// ALREADY_EXISTS would be classified as another reader's conflict (a task answered as a no-op, retried by
// the next tick without end) instead of "these rows are written".
it.each([
  [6, 'already-exists'],
  [11, 'out-of-range'],
])(
  'answers an offset status %i ending the connection as %s, as it answers it in band',
  async (code, kind) => {
    const { history } = await fresh();
    await history.ensureTable('h');
    const s = await history.createStream('h', 'committed');
    const rule = bq.emu.admin.faults.add({ method: 'AppendRowsStream', times: 1, afterItems: 0, code });
    try {
      expect(await history.appendAt('h', s.name, 3, rowsOf(2))).toEqual({ kind, offset: 3 });
    } finally {
      bq.emu.admin.faults.clear(rule);
      history.close();
    }
  },
);
