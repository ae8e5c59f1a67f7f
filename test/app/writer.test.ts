/**
 * The writer use case over in-memory ports: answers, retries of failed and unreported groups (never of
 * confirmed ones), the failure-handler policies, dead letters and per-key ordering (the request deadline:
 * writer-deadline.test.ts).
 */
import { body, col, harness, insert, names, upsert } from './support/writer-harness';

test('every mutation applied: 200 with the counts and the per-request metrics, logged', async () => {
  const h = harness();
  const a = await h.writer.handle(
    body(
      upsert(1),
      insert(2),
      { op: 'update', table: 'Accounts', row: { Id: 1, Balance: 2.5 } },
      { op: 'delete', table: 'Accounts', key: [2] },
    ),
  );
  expect(a.status).toBe(200);
  expect(a.body).toMatchObject({
    mutations: 4,
    applied: 4,
    routed: 0,
    failed: 0,
    unapplied: 0,
    mutationsRetried: 0,
    transientErrors: 0,
    batches: 1,
    attempts: 1,
    groupsRouted: 0,
  });
  expect([...h.sink.rowsOf('Accounts').values()]).toEqual([{ Id: '1', Name: 'n1', Balance: 2.5 }]);
  const line = h.lines.find((l) => l.event === 'writer.request');
  expect(line).toMatchObject({ severity: 'INFO', applied: 4, bufferedCells: 7, mutationsRetried: 0 });
});

test('a bad request is a 400 naming each problem, and nothing of it is written', async () => {
  const h = harness();
  const a = await h.writer.handle(
    body(
      upsert(1),
      { op: 'insert', table: 'Accounts', row: { Id: 'x', Name: 3 } },
      { op: 'insert', table: 'Nope', row: {} },
    ),
  );
  expect(a.status).toBe(400);
  expect((a.body.error as { problems: string[] }).problems).toEqual([
    'mutations[1].row.Id: expected INT64 (a decimal string, or a number within ±2^53), got a string "x"',
    'mutations[1].row.Name: expected STRING (a string), got a number 3',
    'mutations[2].table: no table "Nope" in the database',
  ]);
  expect(h.sink.calls).toEqual([]);
  // The unknown table made the writer read the schema again once before answering.
  expect(h.source.reads).toBe(2);
});

test('a table created after the writer started is found by re-reading the schema', async () => {
  const h = harness();
  await h.writer.start();
  h.source.catalog.tables.push({
    name: 'Late',
    columns: [col('Id', 'INT64', false)],
    primaryKey: ['Id'],
    indexes: 0,
  });
  h.sink.catalog = h.source.catalog;
  const a = await h.writer.handle(body({ op: 'insert', table: 'Late', row: { Id: 1 } }));
  expect(a.status).toBe(200);
  expect(h.source.reads).toBe(2);
});

test('a stream broken partway: only the groups without a status are re-sent, none confirmed twice', async () => {
  const h = harness();
  h.sink.inject({ kind: 'break', after: 2, code: 14 });
  const a = await h.writer.handle(body(...[1, 2, 3, 4, 5].map((i) => upsert(i))));
  expect(a.status).toBe(200);
  expect(a.body).toMatchObject({
    applied: 5,
    mutationsRetried: 3,
    transientErrors: 1,
    batches: 2,
    attempts: 2,
  });
  expect(h.sink.calls.map((c) => c.map((m) => m.index))).toEqual([
    [0, 1, 2, 3, 4],
    [2, 3, 4],
  ]);
  expect([...h.sink.commits.values()]).toEqual([1, 1, 1, 1, 1]);
  expect(h.sleeps).toEqual([500]);
});

test('answers lost with the stream: replayed inserts come back ALREADY_EXISTS and are routed, not failed', async () => {
  const h = harness();
  h.sink.inject({ kind: 'break', after: 1, code: 14, applyRest: true });
  const a = await h.writer.handle(body(insert(1), insert(2), insert(3)));
  expect(a.status).toBe(200);
  expect(a.body).toMatchObject({ applied: 1, routed: 2, groupsRouted: 2 });
  const [object] = (await h.store.list('writer-dead-letters/sluice/')).items;
  expect(a.body.deadLetter).toBe(`gs://acme-ledger/${object?.name}`);
  const doc = JSON.parse(String((await h.store.read(object?.name ?? ''))?.data));
  expect(
    doc.entries.map((e: { index: number; status: { name: string }; attempts: number }) => [
      e.index,
      e.status.name,
      e.attempts,
    ]),
  ).toEqual([
    [1, 'ALREADY_EXISTS', 2],
    [2, 'ALREADY_EXISTS', 2],
  ]);
  expect(doc.entries[0].mutation).toEqual({ op: 'insert', table: 'Accounts', row: { Id: '2', Name: 'n2' } });
});

test('transient statuses are retried within the budget, then answered 503 (429 for RESOURCE_EXHAUSTED)', async () => {
  const h = harness({ SLUICE_WRITER_MAX_ATTEMPTS: '3' });
  for (let i = 0; i < 3; i++) h.sink.inject({ kind: 'status', positions: [0], code: 10 });
  const a = await h.writer.handle(body(upsert(1), upsert(2)));
  expect(a.status).toBe(503);
  expect(a.body).toMatchObject({
    applied: 1,
    unapplied: 1,
    transientErrors: 3,
    mutationsRetried: 2,
    attempts: 3,
  });
  expect(a.body.failures).toEqual([
    expect.objectContaining({ index: 0, reason: 'retries-exhausted', status: 'ABORTED', attempts: 3 }),
  ]);
  expect(h.sleeps).toEqual([500, 1000]);
  const r = harness({ SLUICE_WRITER_MAX_ATTEMPTS: '2' });
  for (let i = 0; i < 2; i++) r.sink.inject({ kind: 'status', positions: [0], code: 8 });
  expect((await r.writer.handle(body(upsert(1)))).status).toBe(429);
});

test('schema violations fail the request by default (422) and are routed with the opt-in policy', async () => {
  const bad = body(upsert(1), { op: 'insert', table: 'Accounts', row: { Id: 2, Name: null } });
  const strict = harness();
  const a = await strict.writer.handle(bad);
  expect(a.status).toBe(422);
  expect(a.body).toMatchObject({ applied: 1, failed: 1, routed: 0 });
  expect(a.body.failures).toEqual([
    expect.objectContaining({ index: 1, reason: 'constraint-violation', status: 'FAILED_PRECONDITION' }),
  ]);
  expect((await strict.store.list('')).items).toEqual([]);
  const lenient = harness({ SLUICE_WRITER_CONSTRAINT_VIOLATION_POLICY: 'route-to-failure-handler' });
  const b = await lenient.writer.handle(bad);
  expect(b.status).toBe(200);
  expect(b.body).toMatchObject({ applied: 1, routed: 1 });
});

test('NOT_FOUND and FAILED_PRECONDITION from system state are never routed', async () => {
  const h = harness({ SLUICE_WRITER_CONSTRAINT_VIOLATION_POLICY: 'route-to-failure-handler' });
  const a = await h.writer.handle(body({ op: 'update', table: 'Accounts', row: { Id: 404, Name: 'x' } }));
  expect(a.status).toBe(422);
  expect(a.body.failures).toEqual([expect.objectContaining({ reason: 'not-found', status: 'NOT_FOUND' })]);
  h.sink.inject({
    kind: 'status',
    positions: [0],
    code: 9,
    message: 'The KMS key projects/p/keys/k is disabled',
  });
  const b = await h.writer.handle(body(upsert(1)));
  expect(b.status).toBe(500);
  expect(b.body).toMatchObject({ failed: 1, routed: 0 });
});

test('groups of one request may apply out of order; per-key ordering keeps the later write last', async () => {
  // The first write of row 1 is aborted once, the second succeeds at once.
  const unordered = harness();
  unordered.sink.inject({ kind: 'status', positions: [0], code: 10 });
  await unordered.writer.handle(body(upsert(1, 'first'), upsert(1, 'second')));
  expect(names(unordered)).toEqual(['first']);
  const ordered = harness({ SLUICE_WRITER_ORDERING: 'per-key' });
  ordered.sink.inject({ kind: 'status', positions: [0], code: 10 });
  const a = await ordered.writer.handle(body(upsert(1, 'first'), upsert(2, 'other'), upsert(1, 'second')));
  expect(a.status).toBe(200);
  expect(names(ordered)).toEqual(['second', 'other']);
  expect(ordered.sink.calls.map((c) => c.map((m) => m.index))).toEqual([[0, 1], [0], [2]]);
});

test('per-key ordering: a later write of a row whose earlier write failed is not sent', async () => {
  const h = harness({ SLUICE_WRITER_ORDERING: 'per-key' });
  const a = await h.writer.handle(
    body({ op: 'update', table: 'Accounts', row: { Id: 9, Name: 'x' } }, upsert(9, 'later')),
  );
  expect(a.status).toBe(422);
  expect(a.body.failures).toEqual([
    expect.objectContaining({ index: 0, reason: 'not-found' }),
    expect.objectContaining({ index: 1, reason: 'earlier-write-of-key-not-applied', status: 'NOT_FOUND' }),
  ]);
  expect(h.sink.rowsOf('Accounts').size).toBe(0);
});

test('batches follow the index-aware cell count: three indexes make 7 cells per row', async () => {
  const h = harness({ SLUICE_WRITER_MAX_BATCH_CELLS: '100' });
  const rows = Array.from({ length: 30 }, (_, i) => ({
    op: 'insert',
    table: 'Wide',
    row: { Id: i, A: 'a', B: 'b', C: 'c' },
  }));
  const a = await h.writer.handle(body(...rows));
  expect(a.status).toBe(200);
  expect(h.sink.calls.map((c) => c.length)).toEqual([14, 14, 2]);
  expect(a.body).toMatchObject({
    batches: 3,
    bufferedCells: 98,
    flushes: { cells: 2, mutations: 0, bytes: 0, end: 1 },
  });
});

test('a Pub/Sub push envelope: the dead letter names the message', async () => {
  const h = harness();
  await h.writer.handle(body(insert(1)));
  const data = Buffer.from(JSON.stringify(body(insert(1)))).toString('base64');
  const a = await h.writer.handle({
    message: { data, messageId: 'msg-7' },
    subscription: 'projects/p/subscriptions/s',
  });
  expect(a.status).toBe(200);
  expect(a.body).toMatchObject({ routed: 1 });
  const [object] = (await h.store.list('')).items;
  expect(JSON.parse(String((await h.store.read(object?.name ?? ''))?.data)).pubsub).toEqual({
    messageId: 'msg-7',
    subscription: 'projects/p/subscriptions/s',
  });
});

test('startup warns about a limit another makes unreachable', async () => {
  const h = harness({ SLUICE_WRITER_MAX_BATCH_CELLS: '100', SLUICE_WRITER_MAX_BATCH_MUTATIONS: '500' });
  await h.writer.start();
  expect(h.lines.find((l) => l.event === 'writer.settings')?.message).toBe(
    'writer settings: maxBatchMutations (500) can never be reached: every mutation costs at least one cell and maxBatchCells is 100',
  );
  expect(h.lines.find((l) => l.event === 'writer.start')).toMatchObject({ worstCaseRetryMs: 355_500 });
});
