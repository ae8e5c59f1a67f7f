/**
 * The writer's retries and limits end to end on the emulators, both dialects: a stream broken partway (commits
 * counted per row at the emulator: no confirmed group is re-sent), answers lost in transit, transient group
 * statuses, the index-aware batch limit against the emulator's request limit, a schema change under a
 * running writer, and per-key ordering.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { dialectOf, useWriterStack } from './support/use-writer-stack';
import { post, reasons } from './support/writer-stack';

const stack = useWriterStack();

describe.each(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'] as const)('%s', (d) => {
  const { db, T, m, id } = dialectOf(stack, d);
  let url: string;

  beforeAll(async () => {
    url = await stack.serve(db());
  });

  test('a stream broken partway: the unreported groups are re-sent, no confirmed group is committed twice', async () => {
    stack.emu.admin.faults.add({ method: 'BatchWrite', times: 1, afterItems: 3, code: 14 });
    const ids = Array.from({ length: 8 }, (_, i) => id(100 + i));
    const a = await post(url, {
      mutations: ids.map((x) => m('insertOrUpdate', 'Customers', { Id: x, Name: 'r' })),
    });
    expect(a).toMatchObject({
      status: 200,
      body: { applied: 8, mutationsRetried: 5, transientErrors: 1, attempts: 2 },
    });
    const commits = stack.emu.admin.batchWriteCommits(db().formattedName_);
    expect(ids.map((x) => commits.get(`${T('Customers')} ["${x}"]`))).toEqual(Array(8).fill(1));
  });

  test('answers lost in transit: inserts replayed by the retry are routed as ALREADY_EXISTS, applied once', async () => {
    stack.emu.admin.faults.add({
      method: 'BatchWrite',
      times: 1,
      afterItems: 1,
      code: 14,
      applyAfterBreak: true,
    });
    const ids = [id(200), id(201), id(202)];
    const a = await post(url, { mutations: ids.map((x) => m('insert', 'Customers', { Id: x, Name: 'i' })) });
    expect(a).toMatchObject({ status: 200, body: { applied: 1, routed: 2 } });
    const commits = stack.emu.admin.batchWriteCommits(db().formattedName_);
    expect(ids.map((x) => commits.get(`${T('Customers')} ["${x}"]`))).toEqual([1, 1, 1]);
  });

  test('transient group statuses are retried', async () => {
    stack.emu.admin.faults.add({
      method: 'BatchWrite',
      times: 2,
      items: [0],
      code: 10,
      message: 'Transaction was aborted.',
    });
    const a = await post(url, {
      mutations: [
        m('insertOrUpdate', 'Customers', { Id: id(300), Name: 'a' }),
        m('insertOrUpdate', 'Customers', { Id: id(301), Name: 'b' }),
      ],
    });
    expect(a).toMatchObject({
      status: 200,
      body: { applied: 2, transientErrors: 2, mutationsRetried: 2, attempts: 3 },
    });
  });

  test('a table with three indexes flushes at the index-aware count: 7 cells a row, 14 rows per 100 cells', async () => {
    stack.emu.admin.setLimits({ mutationsPerCommit: 100 });
    const small = await stack.serve(db(), { SLUICE_WRITER_MAX_BATCH_CELLS: '100' });
    const before = stack.emu.admin.batchWrites(db().formattedName_).length;
    const rows = Array.from({ length: 30 }, (_, i) =>
      m('insert', 'Wide', { Id: id(400 + i), A: 'a', B: 'b', C: 'c' }),
    );
    const a = await post(small, { mutations: rows });
    expect(a).toMatchObject({
      status: 200,
      body: { applied: 30, batches: 3, bufferedCells: 98, flushes: { cells: 2, end: 1 } },
    });
    const seen = stack.emu.admin.batchWrites(db().formattedName_).slice(before);
    expect(seen.map((r) => [r.groups, r.mutations])).toEqual([
      [14, 98],
      [14, 98],
      [2, 14],
    ]);
    // Counting rows instead of cells: 20 rows = 140 cells, over the limit — the whole request is rejected.
    const naive = await stack.serve(db(), { SLUICE_WRITER_MAX_BATCH_MUTATIONS: '20' });
    const b = await post(naive, {
      mutations: Array.from({ length: 20 }, (_, i) =>
        m('insert', 'Wide', { Id: id(500 + i), A: 'a', B: 'b', C: 'c' }),
      ),
    });
    expect(b.status).toBe(500);
    expect(b.body).toMatchObject({ applied: 0, failed: 20, routed: 0 });
    expect(reasons(b.body)[0]).toEqual([0, 'request-rejected', 'INVALID_ARGUMENT']);
  });

  test('a batch of several MiB (above gRPC’s 4 MiB default) is written in one call', async () => {
    const big = await stack.serve(db(), { SLUICE_WRITER_MAX_BATCH_BYTES: String(8 * 1024 * 1024) });
    const note = 'n'.repeat(2 * 1024 * 1024);
    const a = await post(big, {
      mutations: [0, 1, 2].map((i) => m('insert', 'Orders', { Id: id(700 + i), Qty: 1, Note: note })),
    });
    expect(a).toMatchObject({ status: 200, body: { applied: 3, batches: 1, transientErrors: 0 } });
  });

  test('a column dropped under a running writer: the write fails NOT_FOUND, the schema is re-read, the next request is a 400', async () => {
    const [op] = await db().updateSchema([`ALTER TABLE ${T('Orders')} DROP COLUMN ${T('Note')}`]);
    await op.promise();
    const a = await post(url, {
      mutations: [m('insertOrUpdate', 'Orders', { Id: id(600), Qty: 1, Note: 'n' })],
    });
    expect(a.status).toBe(422);
    expect(reasons(a.body)).toEqual([[0, 'not-found', 'NOT_FOUND']]);
    const b = await post(url, {
      mutations: [m('insertOrUpdate', 'Orders', { Id: id(601), Qty: 1, Note: 'n' })],
    });
    expect(b.status).toBe(400);
    expect((b.body.error as { problems: string[] }).problems).toEqual([
      `mutations[0].row.${T('Note')}: no column ${JSON.stringify(T('Note'))} in table ${T('Orders')}`,
    ]);
  });

  test('per-key ordering: the later write of a row lands last even when the earlier one is retried', async () => {
    const ordered = await stack.serve(db(), { SLUICE_WRITER_ORDERING: 'per-key' });
    stack.emu.admin.faults.add({ method: 'BatchWrite', times: 1, items: [0], code: 10 });
    const a = await post(ordered, {
      mutations: [
        m('insertOrUpdate', 'Customers', { Id: id(800), Name: 'first' }),
        m('insertOrUpdate', 'Customers', { Id: id(800), Name: 'second' }),
      ],
    });
    expect(a).toMatchObject({ status: 200, body: { applied: 2, attempts: 3 } });
    const [rows] = await db().run({
      sql: `SELECT ${T('Name')} FROM ${T('Customers')} WHERE ${T('Id')} = ${id(800)}`,
      json: true,
    });
    expect(rows).toEqual([{ [T('Name')]: 'second' }]);
  });
});
