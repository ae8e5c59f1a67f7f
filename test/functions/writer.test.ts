/**
 * The writer function end to end on the emulators: its HTTP handler served by the functions framework,
 * the official Spanner and Storage clients, both dialects. Each status family, retries after a broken stream
 * (commits counted per row at the emulator: no confirmed group is re-sent), the index-aware batch limit,
 * the failure-handler policies, a schema change under a running writer, the Pub/Sub envelope and per-key
 * ordering.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { Server } from 'node:http';
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import type { Database } from '@google-cloud/spanner';
import { createWriterHandler } from '../../functions/writer';
import { type GcsEmulator, startGcsEmulator } from '../../local/emulators/gcs/emulator';
import { createTestDatabase, type TestDatabase } from '../../local/emulators/spanner/client';
import { type RunningSpannerEmulator, startSpannerEmulator } from '../../local/emulators/spanner/server';
import { createWriterFromEnv, type WriterInstance } from '../../shared/wiring/writer';

type Dialect = 'GOOGLE_STANDARD_SQL' | 'POSTGRESQL';

const DDL: Record<Dialect, string[]> = {
  GOOGLE_STANDARD_SQL: [
    'CREATE TABLE Customers (Id INT64 NOT NULL, Name STRING(10) NOT NULL, Score FLOAT64, Raw BYTES(MAX), At TIMESTAMP) PRIMARY KEY (Id)',
    `CREATE TABLE Orders (Id INT64 NOT NULL, Customer INT64, Qty INT64, Note STRING(MAX),
     CONSTRAINT OrdersCustomer FOREIGN KEY (Customer) REFERENCES Customers (Id),
     CONSTRAINT QtyPositive CHECK (Qty > 0)) PRIMARY KEY (Id)`,
    'CREATE TABLE Wide (Id INT64 NOT NULL, A STRING(MAX), B STRING(MAX), C STRING(MAX)) PRIMARY KEY (Id)',
    'CREATE INDEX WideA ON Wide (A)',
    'CREATE INDEX WideB ON Wide (B)',
    'CREATE INDEX WideC ON Wide (C)',
  ],
  POSTGRESQL: [
    'CREATE TABLE customers (id bigint NOT NULL PRIMARY KEY, name varchar(10) NOT NULL, score float8, raw bytea, at timestamptz)',
    `CREATE TABLE orders (id bigint NOT NULL PRIMARY KEY, customer bigint, qty bigint, note text,
     CONSTRAINT orders_customer FOREIGN KEY (customer) REFERENCES customers (id),
     CONSTRAINT qty_positive CHECK (qty > 0))`,
    'CREATE TABLE wide (id bigint NOT NULL PRIMARY KEY, a text, b text, c text)',
    'CREATE INDEX wide_a ON wide (a)',
    'CREATE INDEX wide_b ON wide (b)',
    'CREATE INDEX wide_c ON wide (c)',
  ],
};

const BUCKET = 'writer-dead-letters';
let emu: RunningSpannerEmulator;
let gcs: GcsEmulator;
const dbs: Partial<Record<Dialect, TestDatabase>> = {};
const servers: Server[] = [];
const writers: WriterInstance[] = [];
/** The writers' log lines (Cloud Logging JSON), newest last. */
const lines: Array<Record<string, unknown>> = [];
let served = 0;

beforeAll(async () => {
  emu = await startSpannerEmulator({ port: 0, changeStreams: false });
  gcs = await startGcsEmulator({ port: 0, buckets: [BUCKET] });
  process.env.SPANNER_EMULATOR_HOST = emu.address;
  for (const d of ['GOOGLE_STANDARD_SQL', 'POSTGRESQL'] as const)
    dbs[d] = await createTestDatabase(emu, d, DDL[d]);
});

afterEach(() => {
  emu.admin.faults.clear();
  emu.admin.setLimits({ mutationsPerCommit: 80_000 });
});

afterAll(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
  for (const w of writers) await w.close();
  for (const t of Object.values(dbs)) await t?.close();
  await gcs?.stop();
  await emu?.stop();
  delete process.env.SPANNER_EMULATOR_HOST;
});

/** A writer function served by the functions framework on a free port; returns its base URL. */
async function serve(db: Database, env: Record<string, string> = {}): Promise<string> {
  const [, project, , instance, , database] = db.formattedName_.split('/') as string[];
  const built = await createWriterFromEnv(
    {
      SLUICE_PROJECT: project as string,
      SLUICE_SPANNER_INSTANCE: instance as string,
      SLUICE_SPANNER_DATABASE: database as string,
      SLUICE_WRITER_DEAD_LETTER_BUCKET: BUCKET,
      SLUICE_GCS_ENDPOINT: gcs.url,
      SLUICE_WRITER_BACKOFF_INITIAL_MS: '10',
      SLUICE_WRITER_BACKOFF_MAX_MS: '40',
      ...env,
    },
    (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
  );
  writers.push(built);
  const name = `writer-test-${++served}`;
  http(
    name,
    createWriterHandler(async () => built),
  );
  const server = getTestServer(name);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

async function post(url: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}/mutations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const lower = (d: Dialect, s: string) => (d === 'POSTGRESQL' ? s.toLowerCase() : s);
const reasons = (b: Record<string, unknown>) =>
  ((b.failures as Array<{ index: number; reason: string; status: string }>) ?? []).map((f) => [
    f.index,
    f.reason,
    f.status,
  ]);

describe.each(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'] as const)('%s', (d) => {
  const db = () => (dbs[d] as TestDatabase).database;
  const T = (t: string) => lower(d, t);
  const row = (values: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(values).map(([k, v]) => [lower(d, k), v]));
  const m = (op: string, table: string, values: Record<string, unknown>) => ({
    op,
    table: T(table),
    row: row(values),
  });
  let url: string;
  let routing: string;
  const base = d === 'POSTGRESQL' ? 10_000 : 0;
  const id = (n: number) => String(base + n);

  beforeAll(async () => {
    url = await serve(db());
    routing = await serve(db(), { SLUICE_WRITER_CONSTRAINT_VIOLATION_POLICY: 'route-to-failure-handler' });
  });

  test('every value type lands; the answer counts and the emulator saw one group per mutation', async () => {
    const a = await post(url, {
      mutations: [
        m('insert', 'Customers', {
          Id: id(1),
          Name: 'Ann',
          Score: 1.5,
          Raw: 'AAEC',
          At: '2024-01-01T00:00:00.123456789Z',
        }),
        m('insertOrUpdate', 'Customers', { Id: Number(id(2)), Name: 'Bo', Score: 'NaN' }),
        { op: 'delete', table: T('Customers'), key: [id(3)] },
      ],
    });
    expect(a).toMatchObject({ status: 200, body: { applied: 3, routed: 0, failed: 0, batches: 1 } });
    const [rows] = await db().run({
      sql: `SELECT ${T('At')}, ${T('Raw')} FROM ${T('Customers')} WHERE ${T('Id')} = ${id(1)}`,
      json: true,
    });
    const r = rows[0] as Record<string, { toISOString(): string } | Buffer>;
    expect(Buffer.from(r[T('Raw')] as Buffer)).toEqual(Buffer.from([0, 1, 2]));
    expect(emu.admin.batchWrites(db().formattedName_).at(-1)).toMatchObject({ groups: 3 });
  });

  test('status families: ALREADY_EXISTS routed to a dead letter; schema violations and NOT_FOUND fail the request', async () => {
    await post(url, { mutations: [m('insert', 'Customers', { Id: id(10), Name: 'Cy' })] });
    const a = await post(url, {
      mutations: [
        m('insert', 'Customers', { Id: id(10), Name: 'Cy again' }),
        m('insert', 'Customers', { Id: id(11), Name: null }),
        m('insert', 'Customers', { Id: id(12), Name: 'much too long' }),
        m('insert', 'Orders', { Id: id(13), Customer: id(404), Qty: 1 }),
        m('insert', 'Orders', { Id: id(14), Customer: id(10), Qty: 0 }),
        m('update', 'Customers', { Id: id(15), Name: 'ghost' }),
        m('insert', 'Orders', { Id: id(16), Customer: id(10), Qty: 2 }),
      ],
    });
    expect(a.status).toBe(422);
    expect(a.body).toMatchObject({ applied: 1, routed: 1, failed: 5 });
    expect(reasons(a.body)).toEqual([
      [1, 'constraint-violation', 'FAILED_PRECONDITION'],
      [2, 'constraint-violation', 'FAILED_PRECONDITION'],
      [3, 'constraint-violation', 'FAILED_PRECONDITION'],
      [4, 'constraint-violation', 'OUT_OF_RANGE'],
      [5, 'not-found', 'NOT_FOUND'],
    ]);
    // The request's metrics are logged as one Cloud Logging line, at ERROR since mutations failed.
    expect(lines.filter((l) => l.event === 'writer.request').at(-1)).toMatchObject({
      severity: 'ERROR',
      mutations: 7,
      failed: 5,
      groupsRouted: 1,
      mutationsRetried: 0,
      transientErrors: 0,
      bufferedCells: expect.any(Number),
      bufferedBytes: expect.any(Number),
      deadLetter: a.body.deadLetter,
    });
    const name = String(a.body.deadLetter).replace(`gs://${BUCKET}/`, '');
    const doc = JSON.parse(String(gcs.admin.read(BUCKET, name)));
    expect(doc.entries).toEqual([
      expect.objectContaining({
        index: 0,
        reason: 'already-exists',
        status: expect.objectContaining({ name: 'ALREADY_EXISTS' }),
      }),
    ]);
  });

  test('with route-to-failure-handler the schema violations are routed too; NOT_FOUND never is', async () => {
    const a = await post(routing, {
      mutations: [
        m('insert', 'Customers', { Id: id(20), Name: null }),
        m('insert', 'Orders', { Id: id(21), Qty: -1 }),
        m('update', 'Customers', { Id: id(22), Name: 'x' }),
      ],
    });
    expect(a.status).toBe(422);
    expect(a.body).toMatchObject({ routed: 2, failed: 1 });
    expect(reasons(a.body)).toEqual([[2, 'not-found', 'NOT_FOUND']]);
    const ok = await post(routing, { mutations: [m('insert', 'Customers', { Id: id(23), Name: null })] });
    expect(ok).toMatchObject({ status: 200, body: { routed: 1, groupsRouted: 1 } });
  });

  test('a stream broken partway: the unreported groups are re-sent, no confirmed group is committed twice', async () => {
    emu.admin.faults.add({ method: 'BatchWrite', times: 1, afterItems: 3, code: 14 });
    const ids = Array.from({ length: 8 }, (_, i) => id(100 + i));
    const a = await post(url, {
      mutations: ids.map((x) => m('insertOrUpdate', 'Customers', { Id: x, Name: 'r' })),
    });
    expect(a).toMatchObject({
      status: 200,
      body: { applied: 8, mutationsRetried: 5, transientErrors: 1, attempts: 2 },
    });
    const commits = emu.admin.batchWriteCommits(db().formattedName_);
    expect(ids.map((x) => commits.get(`${T('Customers')} ["${x}"]`))).toEqual(Array(8).fill(1));
  });

  test('answers lost in transit: inserts replayed by the retry are routed as ALREADY_EXISTS, applied once', async () => {
    emu.admin.faults.add({ method: 'BatchWrite', times: 1, afterItems: 1, code: 14, applyAfterBreak: true });
    const ids = [id(200), id(201), id(202)];
    const a = await post(url, { mutations: ids.map((x) => m('insert', 'Customers', { Id: x, Name: 'i' })) });
    expect(a).toMatchObject({ status: 200, body: { applied: 1, routed: 2 } });
    const commits = emu.admin.batchWriteCommits(db().formattedName_);
    expect(ids.map((x) => commits.get(`${T('Customers')} ["${x}"]`))).toEqual([1, 1, 1]);
  });

  test('transient group statuses are retried', async () => {
    emu.admin.faults.add({
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
    emu.admin.setLimits({ mutationsPerCommit: 100 });
    const small = await serve(db(), { SLUICE_WRITER_MAX_BATCH_CELLS: '100' });
    const before = emu.admin.batchWrites(db().formattedName_).length;
    const rows = Array.from({ length: 30 }, (_, i) =>
      m('insert', 'Wide', { Id: id(400 + i), A: 'a', B: 'b', C: 'c' }),
    );
    const a = await post(small, { mutations: rows });
    expect(a).toMatchObject({
      status: 200,
      body: { applied: 30, batches: 3, bufferedCells: 98, flushes: { cells: 2, end: 1 } },
    });
    const seen = emu.admin.batchWrites(db().formattedName_).slice(before);
    expect(seen.map((r) => [r.groups, r.mutations])).toEqual([
      [14, 98],
      [14, 98],
      [2, 14],
    ]);
    // Counting rows instead of cells: 20 rows = 140 cells, over the limit — the whole request is rejected.
    const naive = await serve(db(), { SLUICE_WRITER_MAX_BATCH_MUTATIONS: '20' });
    const b = await post(naive, {
      mutations: Array.from({ length: 20 }, (_, i) =>
        m('insert', 'Wide', { Id: id(500 + i), A: 'a', B: 'b', C: 'c' }),
      ),
    });
    expect(b.status).toBe(500);
    expect(b.body).toMatchObject({ applied: 0, failed: 20, routed: 0 });
    expect(reasons(b.body)[0]).toEqual([0, 'request-rejected', 'INVALID_ARGUMENT']);
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

  test('a Pub/Sub push envelope', async () => {
    const data = Buffer.from(
      JSON.stringify({ mutations: [m('insertOrUpdate', 'Customers', { Id: id(700), Name: 'ps' })] }),
    ).toString('base64');
    const a = await post(url, {
      message: { data, messageId: '123', publishTime: '2024-01-01T00:00:00Z' },
      subscription: 'projects/p/subscriptions/writer',
    });
    expect(a).toMatchObject({ status: 200, body: { applied: 1 } });
    const bad = await post(url, {
      message: { data: Buffer.from('{"mutations": 1}').toString('base64'), messageId: '124' },
    });
    expect(bad.status).toBe(400);
  });

  test('per-key ordering: the later write of a row lands last even when the earlier one is retried', async () => {
    const ordered = await serve(db(), { SLUICE_WRITER_ORDERING: 'per-key' });
    emu.admin.faults.add({ method: 'BatchWrite', times: 1, items: [0], code: 10 });
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

  test('bad requests are 400s and write nothing', async () => {
    const before = emu.admin.batchWrites(db().formattedName_).length;
    const a = await post(url, {
      mutations: [m('insert', 'Customers', { Id: 'x' }), { op: 'insert', table: 'Nope', row: {} }],
    });
    expect(a.status).toBe(400);
    expect((a.body.error as { problems: string[] }).problems).toHaveLength(2);
    expect(emu.admin.batchWrites(db().formattedName_).length).toBe(before);
    const res = await fetch(`${url}/mutations`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{"mutations":',
    });
    expect(res.status).toBe(400);
    expect((await fetch(`${url}/other`, { method: 'POST' })).status).toBe(404);
    expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ function: 'writer', ok: true });
  });
});

test('a writer that cannot start answers 500 (bad configuration) or 503 (Spanner unreachable), never a 4xx', async () => {
  const answer = async (err: unknown) => {
    const res = {
      code: 0,
      body: undefined as unknown,
      status(c: number) {
        res.code = c;
        return res;
      },
      json(b: unknown) {
        res.body = b;
      },
    };
    const handler = createWriterHandler(() => Promise.reject(err));
    await handler(
      { method: 'POST', path: '/mutations', body: { mutations: [] }, header: () => undefined },
      res,
    );
    return res.code;
  };
  const { ConfigError } = await import('../../shared/domain/config');
  expect(await answer(new ConfigError([{ path: 'SLUICE_PROJECT', rule: 'is required' }]))).toBe(500);
  expect(await answer(Object.assign(new Error('no connection'), { code: 14 }))).toBe(503);
  expect(await answer(Object.assign(new Error('slow down'), { code: 8 }))).toBe(429);
});
