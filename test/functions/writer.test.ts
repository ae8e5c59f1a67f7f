/**
 * The writer function end to end on the emulators (its HTTP handler served by the functions framework, the
 * official Spanner and Storage clients), both dialects: every status family and the failure-handler
 * policies, dead letters, the log line of a request, the Pub/Sub envelope and malformed requests.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { createWriterHandler } from '../../functions/writer';
import { fakeResponse } from './support/fakes';
import { dialectOf, useWriterStack } from './support/use-writer-stack';
import { BUCKET, post, reasons } from './support/writer-stack';

const stack = useWriterStack();

describe.each(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'] as const)('%s', (d) => {
  const { db, T, m, id } = dialectOf(stack, d);
  let url: string;
  let routing: string;

  beforeAll(async () => {
    url = await stack.serve(db());
    routing = await stack.serve(db(), {
      SLUICE_WRITER_CONSTRAINT_VIOLATION_POLICY: 'route-to-failure-handler',
    });
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
    expect(stack.emu.admin.batchWrites(db().formattedName_).at(-1)).toMatchObject({ groups: 3 });
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
    expect(stack.lines.filter((l) => l.event === 'writer.request').at(-1)).toMatchObject({
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
    const doc = JSON.parse(String(stack.gcs.admin.read(BUCKET, name)));
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

  test('bad requests are 400s and write nothing', async () => {
    const before = stack.emu.admin.batchWrites(db().formattedName_).length;
    const a = await post(url, {
      mutations: [m('insert', 'Customers', { Id: 'x' }), { op: 'insert', table: 'Nope', row: {} }],
    });
    expect(a.status).toBe(400);
    expect((a.body.error as { problems: string[] }).problems).toHaveLength(2);
    expect(stack.emu.admin.batchWrites(db().formattedName_).length).toBe(before);
    const res = await fetch(`${url}/mutations`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{"mutations":',
    });
    // Not JSON by its type: 415 naming the type to send (ADR-2302).
    expect(res.status).toBe(415);
    const small = await stack.serve(db(), { SLUICE_WRITER_MAX_BODY_BYTES: '1024' });
    const big = await post(small, {
      mutations: [m('insertOrUpdate', 'Customers', { Id: id(800), Name: 'x'.repeat(2000) })],
    });
    expect(big.status).toBe(413);
    // Each refusal logs writer.rejected (what the rejected-requests metric and its alert count).
    const rejected = stack.lines.filter((l) => l.event === 'writer.rejected').slice(-3);
    expect(rejected.map((l) => l.severity)).toEqual(['WARNING', 'WARNING', 'WARNING']);
    expect(rejected[2]).toMatchObject({ status: 413 });
    expect((await fetch(`${url}/other`, { method: 'POST' })).status).toBe(404);
    expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ function: 'writer', ok: true });
  });
});

test('a writer that cannot start answers 500 (bad configuration) or 503 (Spanner unreachable), never a 4xx, and logs writer.failed', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const write = process.stdout.write;
  const answer = async (err: unknown) => {
    const res = fakeResponse();
    const handler = createWriterHandler(() => Promise.reject(err));
    process.stdout.write = ((chunk: string) => {
      lines.push(JSON.parse(chunk) as Record<string, unknown>);
      return true;
    }) as typeof process.stdout.write;
    try {
      await handler(
        { method: 'POST', path: '/mutations', body: { mutations: [] }, header: () => undefined },
        res,
      );
    } finally {
      process.stdout.write = write;
    }
    return res.code;
  };
  const { ConfigError } = await import('../../shared/domain/config');
  expect(await answer(new ConfigError([{ path: 'SLUICE_PROJECT', rule: 'is required' }]))).toBe(500);
  expect(await answer(Object.assign(new Error('no connection'), { code: 14 }))).toBe(503);
  expect(await answer(Object.assign(new Error('slow down'), { code: 8 }))).toBe(429);
  // The event the log-based metric and its alert match (infra/log-contract.ts).
  expect(lines.map((l) => [l.severity, l.event, l.status])).toEqual([
    ['ERROR', 'writer.failed', 500],
    ['ERROR', 'writer.failed', 503],
    ['ERROR', 'writer.failed', 429],
  ]);
});
