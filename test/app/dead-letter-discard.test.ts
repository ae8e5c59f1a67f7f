/**
 * `POST /dead-letters/discard` and the writer's letters in `GET /dead-letters`, through the backfill
 * function's HTTP handler over the in-memory pipeline (ADR-2202, ADR-2203): a discard by table takes only
 * that table's pending letters; a writer letter of several tables is left to a discard by id; a writer
 * object that is not a letter is listed as unreadable and counted, never dropped; the listing pages from the
 * stream's letters on to the writer's.
 */
import { callerOf } from '../../functions/backfill/discard-route';
import { addMillis } from '../../shared/domain/timestamp';
import { Harness, T0 } from './support/harness';
import { call } from './support/operator-http';

const WRITER_PREFIX = 'writer-dead-letters/sluice/';

async function withLetters() {
  const h = new Harness({ config: { onBadRecord: 'dead-letter' } });
  h.replica.rejectKeys.add('{"Id":"3"}');
  h.replica.rejectKeys.add('{"Id":"4"}');
  h.script.commit(addMillis(T0, 100), [{ table: 'Orders', id: 3, val: 'x' }]);
  h.script.commit(addMillis(T0, 200), [{ table: 'Items', id: 4, val: 'y' }]);
  h.now = addMillis(T0, 1_000);
  for (let i = 0; i < 4; i++) {
    h.advance(6_000);
    await h.tick();
    await h.drain();
  }
  return h;
}

/** A writer letter as the writer writes it (docs/writer.md), of the tables given. */
async function writerLetter(h: Harness, requestId: string, tables: string[], prefix = WRITER_PREFIX) {
  const entries = tables.map((table, index) => ({
    index,
    mutation: { op: 'insert', table, row: { Id: String(index) } },
    status: { code: 6, name: 'ALREADY_EXISTS', message: 'Row already exists' },
    reason: 'already-exists',
    attempts: 1,
    key: `["${index}"]`,
  }));
  const doc = {
    kind: 'sluice.writer.dead-letter',
    requestId,
    receivedAt: '2026-01-01T00:00:00.000000000Z',
    entries,
  };
  const name = `${prefix}2026/01/01/000000.000000000Z-${requestId}.json`;
  await h.store.write(name, Buffer.from(JSON.stringify(doc)), { ifGeneration: 0 });
  return `writer/2026/01/01/000000.000000000Z-${requestId}`;
}

describe('discarding dead letters', () => {
  it("by table discards that table's pending letters only, the writer's of that table alone included", async () => {
    const h = await withLetters();
    const mixed = await writerLetter(h, 'r-mixed', ['Orders', 'Items']);
    const orders = await writerLetter(h, 'r-orders', ['Orders']);
    const out = await call(h, 'POST', '/dead-letters/discard', {
      body: { table: 'Orders', reason: 'fixed' },
    });
    expect(out.status).toBe(200);
    const ids = (out.json.results as Array<{ id: string }>).map((r) => r.id);
    expect(ids).toHaveLength(2);
    expect(ids).toContain(orders);
    expect(ids.some((id) => id.startsWith('Orders/'))).toBe(true);
    const pending = await call(h, 'GET', '/dead-letters', { query: { state: 'pending' } });
    const left = (pending.json.items as Array<{ id: string; table: string }>).map((i) => i.id);
    expect(left).toContain(mixed);
    expect(left.some((id) => id.startsWith('Items/'))).toBe(true);
    const status = (await h.tick()).status!;
    expect(status.deadLetters).toMatchObject({
      pending: 2,
      discarded: 1,
      writer: { pending: 1, discarded: 1 },
    });
  });

  it('lists a writer object that is not a letter as unreadable, and counts it pending', async () => {
    const h = await withLetters();
    await h.store.write(
      `${WRITER_PREFIX}2026/01/01/000000.000000000Z-broken.json`,
      Buffer.from('{"kind":"x"}'),
      {
        ifGeneration: 0,
      },
    );
    const listed = await call(h, 'GET', '/dead-letters');
    expect(listed.json.items).toContainEqual(
      expect.objectContaining({ source: 'writer', reason: 'writer:unreadable', state: 'pending' }),
    );
    expect((await h.tick()).status!.deadLetters).toMatchObject({ pending: 3, writer: { pending: 1 } });
  });

  it("pages from the stream's letters on to the writer's", async () => {
    const h = await withLetters();
    const w = await writerLetter(h, 'r1', ['Orders']);
    const first = await call(h, 'GET', '/dead-letters', { query: { pageSize: '2' } });
    expect((first.json.items as unknown[]).length).toBe(2);
    const second = await call(h, 'GET', '/dead-letters', {
      query: { pageSize: '2', pageToken: first.json.nextPageToken },
    });
    expect(second.json.items).toEqual([expect.objectContaining({ id: w, source: 'writer' })]);
    expect(second.json.nextPageToken).toBeUndefined();
  });

  it("lists and discards the writer's letters under the prefix the writer was given", async () => {
    const h = await withLetters();
    const deps = { writerDeadLetterPrefix: 'producers/dead-letters/' };
    const id = await writerLetter(h, 'r-custom', ['Orders'], deps.writerDeadLetterPrefix);
    const listed = await call(h, 'GET', '/dead-letters', { deps });
    expect(listed.json.items).toContainEqual(expect.objectContaining({ id, source: 'writer' }));
    expect(listed.json.counts).toMatchObject({ pending: 3, writer: { pending: 1 } });
    const out = await call(h, 'POST', '/dead-letters/discard', { body: { ids: [id] }, deps });
    expect(out.json).toMatchObject({ discarded: 1 });
  });

  it('names bad discard requests', async () => {
    const h = await withLetters();
    const both = await call(h, 'POST', '/dead-letters/discard', { body: { ids: ['x'], table: 'Orders' } });
    expect(both.status).toBe(400);
    expect(String(both.json.error && (both.json.error as { message: string }).message)).toMatch(
      /give either ids .* or table/,
    );
    const bad = await call(h, 'POST', '/dead-letters/discard', { body: { ids: ['nope'], extra: 1 } });
    expect((bad.json.error as { problems: string[] }).problems).toEqual([
      'extra: unknown field (ids, table, reason)',
      'ids[0]: "nope" is not a dead-letter id',
    ]);
  });
});

describe('callerOf', () => {
  const req = (headers: Record<string, string>) => ({
    method: 'POST',
    path: '/',
    header: (n: string) => headers[n.toLowerCase()],
  });
  it('reads the bearer token email, then IAP, then local', () => {
    const jwt = `h.${Buffer.from('{"email":"a@example.com"}').toString('base64url')}.s`;
    expect(callerOf(req({ authorization: `Bearer ${jwt}` }))).toBe('a@example.com');
    expect(callerOf(req({ authorization: 'Bearer not-a-jwt' }))).toBe('local');
    expect(callerOf(req({ 'x-goog-authenticated-user-email': 'accounts.google.com:b@example.com' }))).toBe(
      'b@example.com',
    );
    expect(callerOf(req({}))).toBe('local');
  });
});
