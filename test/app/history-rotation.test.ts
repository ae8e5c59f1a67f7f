/**
 * History stream rotation (ADR-1601) through the real BigQuery history sink on the emulator, driven by the
 * scheduler and readers over a scripted change stream: a column added to the history table makes every
 * partition replace its stream (the old one finalized, its row count matching the ledger), rows keep
 * flowing to the new streams exactly once, and a stream that expires or is finalized behind a partition's
 * back is replaced too — never at the cost of a row.
 */
process.env.METADATA_SERVER_DETECTION = 'none';
delete process.env.BIGQUERY_EMULATOR_HOST;

import { addMillis } from '../../shared/domain/timestamp';
import { bigQueryEmulatorForFile } from '../emulators/bigquery/support/emulator-for-file';
import { Harness } from './support/harness';

const PROJECT = 'test-project';
const bq = bigQueryEmulatorForFile(PROJECT);

async function setup() {
  // Schema reads are never reused here, so a change shows at the next flush (production: within a minute).
  const { dataset, bigquery, history } = await bq.freshHistory('rot', { schemaTtlMs: 0 });
  const h = new Harness({ roots: 2, historySink: history, config: { bigquery: { dataset } } });
  return { h, history, bigquery, dataset };
}

/** Commits `n` transactions on Orders, a few ms apart, then lets the pipeline catch up. */
async function commitAndCatchUp(h: Harness, n: number, from: number): Promise<void> {
  let at = addMillis(h.now, 1);
  for (let i = 0; i < n; i++) {
    h.script.commit(at, [{ table: 'Orders', id: (from + i) % 40, val: `v${from + i}` }]);
    at = addMillis(at, 3);
  }
  h.now = addMillis(at, 10);
  for (let i = 0; i < 4; i++) {
    await h.tick();
    await h.drain();
    h.advance(6_000);
  }
}

async function cursors(h: Harness) {
  const listed = await h.ledger.listPartitions();
  const out = [];
  for (const p of listed.partitions ?? []) {
    const e = (await h.ledger.readPartition(0, p.view.id))?.value;
    if (e?.history.orders_history && e.state !== 'finished') out.push(e.history.orders_history);
  }
  return out;
}

function committedMods(h: Harness): number {
  return [...h.script.parts.values()]
    .flatMap((p) => p.records)
    .filter((r) => r.tableName === 'Orders')
    .reduce((n, r) => n + r.mods.length, 0);
}

function changeIds(dataset: string): string[] {
  return bq.emu.admin.tableRows(dataset, 'orders_history').map((r) => String(r.change_id));
}

it('replaces every stream after a column is added to the history table, with no row lost or repeated', async () => {
  const { h, history, bigquery, dataset } = await setup();
  await commitAndCatchUp(h, 30, 0);
  const before = await cursors(h);
  expect(before.length).toBeGreaterThan(0);
  const table = bigquery.dataset(dataset).table('orders_history');
  const [m] = await table.getMetadata();
  await table.setMetadata({
    schema: { fields: [...m.schema.fields, { name: 'added_later', type: 'STRING', mode: 'NULLABLE' }] },
  });
  await commitAndCatchUp(h, 30, 30);
  const after = await cursors(h);
  const rotated = h.events('history.stream-rotated').filter((e) => e.reason === 'schema');
  expect(rotated.length).toBeGreaterThan(0);
  // Every live partition writes to a stream created after the change.
  const oldStreams = new Set(before.map((c) => c.stream));
  expect(after.every((c) => !oldStreams.has(c.stream))).toBe(true);
  expect(new Set(after.map((c) => c.schema)).size).toBe(1);
  expect(after[0]?.schema).not.toBe(before[0]?.schema);
  // The replaced streams are finalized; each held what its partition's cursor said.
  const streams = bq.emu.admin.writeStreams(dataset, 'orders_history');
  for (const e of rotated) {
    const old = streams.find((s) => s.name === e.previous);
    expect(old).toMatchObject({ finalized: true, rows: Number(e.previousRows) });
  }
  const ids = changeIds(dataset);
  expect(ids).toHaveLength(committedMods(h));
  expect(new Set(ids).size).toBe(ids.length);
  history.close();
});

it('replaces a stream BigQuery forgot or that was finalized elsewhere, and loses nothing', async () => {
  const { h, history, dataset } = await setup();
  await commitAndCatchUp(h, 20, 0);
  const [first, second] = await cursors(h);
  expect(first).toBeDefined();
  expect(second).toBeDefined();
  bq.emu.admin.expireWriteStream(first!.stream);
  await bq.emu.writerClient().finalizeWriteStream({ name: second!.stream });
  await commitAndCatchUp(h, 40, 20);
  const reasons = h.events('history.stream-rotated').map((e) => e.reason);
  expect(reasons).toContain('gone');
  expect(reasons).toContain('finalized');
  expect(h.events('history.stream-count-unknown').length).toBeGreaterThan(0);
  const ids = changeIds(dataset);
  expect(ids).toHaveLength(committedMods(h));
  expect(new Set(ids).size).toBe(ids.length);
  history.close();
});

it('takes a finalize answer without a row count as unknown, not as rows BigQuery lost', async () => {
  const { h, history, bigquery, dataset } = await setup();
  await commitAndCatchUp(h, 20, 0);
  // FinalizeWriteStream answers without row_count (the client reads it as 0) from now on.
  const rule = bq.emu.admin.faults.add({
    method: 'FinalizeWriteStream',
    times: Infinity,
    omit: ['rowCount'],
  });
  try {
    const table = bigquery.dataset(dataset).table('orders_history');
    const [m] = await table.getMetadata();
    await table.setMetadata({
      schema: { fields: [...m.schema.fields, { name: 'added_later', type: 'STRING', mode: 'NULLABLE' }] },
    });
    await commitAndCatchUp(h, 20, 20);
  } finally {
    bq.emu.admin.faults.clear(rule);
  }
  expect(h.events('history.stream-rotated').filter((e) => e.reason === 'schema').length).toBeGreaterThan(0);
  expect(h.events('history.stream-count-unknown').length).toBeGreaterThan(0);
  expect((await h.tick()).status!.partitions.failed).toBe(0);
  const ids = changeIds(dataset);
  expect(ids).toHaveLength(committedMods(h));
  expect(new Set(ids).size).toBe(ids.length);
  history.close();
});
