import { createChangeStreamEngine } from '../../../../local/emulators/spanner/change-streams/engine';
import { realClock } from '../../../../local/emulators/spanner/change-streams/time';
import { Code, type QueryRequest, SpannerError } from '../../../../local/emulators/spanner/hooks';
import { collect, decode, engineWith, fakeSchema, gsqlQuery, ins, iso, manualClock } from './fixtures';

const MS = 1_000_000n;

function expectError(fn: () => unknown, code: number, message: RegExp | string) {
  let error: unknown;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(SpannerError);
  expect((error as SpannerError).code).toBe(code);
  expect((error as SpannerError).message).toMatch(message);
}

describe('query validation: every error of the reference table', () => {
  const clock = manualClock();
  const created = clock.now();
  const { engine, schema } = engineWith(['CREATE CHANGE STREAM S FOR ALL'], {
    now: clock.now,
    initialPartitions: 1,
  });
  clock.advance(1000);
  const now = clock.now();
  const token = engine.admin.partitions('S')[0]?.token ?? '';
  const base = (over: Partial<QueryRequest>): QueryRequest => ({
    sql: 'SELECT ChangeRecord FROM READ_S(@s, NULL, NULL, 1000)',
    params: { s: iso(now) },
    paramTypes: { s: { code: 'TIMESTAMP' } },
    transaction: undefined,
    streaming: true,
    schema,
    signal: new AbortController().signal,
    ...over,
  });
  const route = (over: Partial<QueryRequest>) => () => engine.routeQuery(base(over));

  it('accepts no selector, and a single-use strong read (named and positional arguments)', () => {
    expect(engine.routeQuery(base({}))).toBeDefined();
    expect(gsqlQuery(engine, schema, 'S', { start: now })).toBeDefined();
  });
  it('rejects ExecuteSql, multi-use and non-strong transactions', () => {
    expectError(route({ streaming: false }), Code.INVALID_ARGUMENT, /not supported for the ExecuteSql API/);
    expectError(
      route({ transaction: { begin: { readOnly: { strong: true } } } }),
      Code.INVALID_ARGUMENT,
      /multi use/,
    );
    expectError(route({ transaction: { id: Buffer.from('t1') } }), Code.INVALID_ARGUMENT, /multi use/);
    expectError(
      route({ transaction: { singleUse: { readOnly: { returnReadTimestamp: true } } } }),
      Code.INVALID_ARGUMENT,
      /strong reads/,
    );
    expectError(
      route({ transaction: { singleUse: { readWrite: {} } } }),
      Code.INVALID_ARGUMENT,
      /strong reads/,
    );
  });
  it('rejects start NULL, too old, too far in the future, after end', () => {
    expectError(
      () => gsqlQuery(engine, schema, 'S', { start: null }),
      Code.INVALID_ARGUMENT,
      'start_timestamp must not be null.',
    );
    expectError(
      () => gsqlQuery(engine, schema, 'S', { start: created - 1n }),
      Code.OUT_OF_RANGE,
      /too far in the past/,
    );
    expectError(
      () => gsqlQuery(engine, schema, 'S', { start: now + 11n * 60_000n * MS }),
      Code.OUT_OF_RANGE,
      /too far in the future/,
    );
    expectError(
      () => gsqlQuery(engine, schema, 'S', { start: now, end: now - 1n }),
      Code.INVALID_ARGUMENT,
      /must be <= end_timestamp/,
    );
  });
  it('rejects heartbeat NULL or out of [100, 300000], and non-NULL read_options', () => {
    expectError(
      () => gsqlQuery(engine, schema, 'S', { start: now, hb: null }),
      Code.INVALID_ARGUMENT,
      'heartbeat_milliseconds must not be null.',
    );
    expectError(
      () => gsqlQuery(engine, schema, 'S', { start: now, hb: 99 }),
      Code.OUT_OF_RANGE,
      /within min 100 and max 300000. Received heartbeat_milliseconds: 99/,
    );
    expectError(
      () => gsqlQuery(engine, schema, 'S', { start: now, hb: 300001 }),
      Code.OUT_OF_RANGE,
      /max 300000/,
    );
    expectError(
      route({ sql: "SELECT ChangeRecord FROM READ_S(@s, NULL, NULL, 1000, ['x'])" }),
      Code.INVALID_ARGUMENT,
      /Argument 4 is not a literal/,
    );
    expectError(
      route({
        sql: 'SELECT ChangeRecord FROM READ_S(@s, NULL, NULL, 1000, @ro)',
        params: { s: iso(now), ro: ['x'] },
      }),
      Code.UNIMPLEMENTED,
      'read_options must be null.',
    );
  });
  it('rejects unknown tokens, starts outside the partition, and expired partitions', () => {
    expectError(
      () => gsqlQuery(engine, schema, 'S', { start: now, token: 'bogus' }),
      Code.INVALID_ARGUMENT,
      /does not belong to the Change Stream/,
    );
    const other = engineWith(['CREATE CHANGE STREAM S FOR ALL'], { now: clock.now });
    expectError(
      () => gsqlQuery(other.engine, other.schema, 'S', { start: clock.now(), token }),
      Code.INVALID_ARGUMENT,
      /partition_token is invalid/,
    );
    const [ev] = engine.admin.churnNow('S');
    const child = ev?.children[0] ?? '';
    expectError(
      () => gsqlQuery(engine, schema, 'S', { start: now - 1n, token: child }),
      Code.OUT_OF_RANGE,
      /invalid for the partition/,
    );
    expectError(
      () => gsqlQuery(engine, schema, 'S', { start: (ev?.atNs ?? 0n) + 1n, token }),
      Code.OUT_OF_RANGE,
      /invalid for the partition/,
    );
    clock.advance(25 * 3600 * 1000);
    expectError(
      () => gsqlQuery(engine, schema, 'S', { start: clock.now(), token }),
      Code.OUT_OF_RANGE,
      /no longer valid/,
    );
  });
  it('rejects other SQL around the TVF, non-literal arguments, and a dropped stream', () => {
    expectError(
      route({ sql: 'SELECT ChangeRecord FROM READ_S(@s, NULL, NULL, 1000) AS x' }),
      Code.UNIMPLEMENTED,
      /must not be combined/,
    );
    expectError(
      route({ sql: 'SELECT 1, ChangeRecord FROM READ_S(@s, NULL, NULL, 1000)' }),
      Code.UNIMPLEMENTED,
      /SELECT ChangeRecord FROM READ_S/,
    );
    expectError(
      route({ sql: 'SELECT ChangeRecord FROM READ_S(@s, NULL, NULL, 500 + 500)' }),
      Code.INVALID_ARGUMENT,
      /Argument 3/,
    );
    expect(engine.routeQuery(base({ sql: 'SELECT * FROM READ_Nope(@s, NULL, NULL, 1000)' }))).toBeUndefined();
    expect(engine.routeQuery(base({ sql: 'SELECT 1' }))).toBeUndefined();
    engine.applyDdl('DROP CHANGE STREAM S', schema, clock.now());
    expectError(route({}), Code.NOT_FOUND, 'Change Stream not found: S');
  });
});

describe('query execution in real time', () => {
  const schema = fakeSchema();
  const setup = (initialPartitions = 1) => {
    const now = realClock();
    const engine = createChangeStreamEngine({ now, initialPartitions });
    engine.applyDdl('CREATE CHANGE STREAM S FOR ALL', schema, now());
    const token = engine.admin.partitions('S')[0]?.token ?? '';
    return { now, engine, token };
  };

  it('the initial query returns one child-partitions record per partition, with empty parents', async () => {
    const { now, engine } = setup(3);
    const rows = (await collect(gsqlQuery(engine, schema, 'S', { start: now() }).rows)).map((r) =>
      decode(r, false),
    );
    expect(rows.map((r) => r.kind)).toEqual(['child', 'child', 'child']);
    expect(rows.map((r) => r.body.record_sequence)).toEqual(['00000000', '00000001', '00000002']);
    expect(
      rows.every(
        (r) =>
          r.body.child_partitions.length === 1 &&
          r.body.child_partitions[0].parent_partition_tokens.length === 0,
      ),
    ).toBe(true);
  });

  it('sends heartbeats on a quiet partition at the requested interval, and a future end blocks until then', async () => {
    const { now, engine, token } = setup();
    const start = now();
    const t0 = Date.now();
    const rows = (
      await collect(gsqlQuery(engine, schema, 'S', { start, end: start + 550n * MS, token, hb: 100 }).rows)
    ).map((r) => decode(r, false));
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeGreaterThanOrEqual(540);
    expect(rows.every((r) => r.kind === 'heartbeat')).toBe(true);
    expect(rows.length).toBeGreaterThanOrEqual(3);
    expect(rows.length).toBeLessThanOrEqual(6);
  });

  it('returns records committed while waiting, bounds inclusive, then the child record when the partition ends', async () => {
    const { now, engine, token } = setup();
    const start = now();
    const q = gsqlQuery(engine, schema, 'S', { start, token, hb: 5000 });
    const it = q.rows[Symbol.asyncIterator]();
    const first = it.next();
    const ts = now();
    engine.onCommit({ commitTimestampNs: ts, transactionTag: 't', changes: [ins(1)], schema });
    const d = decode((await first).value, false);
    expect(d.kind).toBe('data');
    expect(d.body.commit_timestamp).toBe(iso(ts));
    const [ev] = engine.admin.churnNow();
    const c = decode((await it.next()).value, false);
    expect(c.kind).toBe('child');
    expect(c.body.start_timestamp).toBe(iso(ev?.atNs ?? 0n));
    expect(c.body.child_partitions.map((x: { token: string }) => x.token)).toEqual(ev?.children);
    expect((await it.next()).done).toBe(true);
    const exact = (await collect(gsqlQuery(engine, schema, 'S', { start: ts, end: ts, token }).rows)).map(
      (r) => decode(r, false),
    );
    expect(exact.map((r) => r.kind)).toEqual(['data']);
  });

  it('an injected fault ends the next query after K rows with the given code', async () => {
    const { now, engine } = setup(3);
    engine.admin.endQueryAfter(2, Code.UNAVAILABLE, 'boom');
    const rows: unknown[] = [];
    await expect(
      (async () => {
        for await (const r of gsqlQuery(engine, schema, 'S', { start: now() }).rows) rows.push(r);
      })(),
    ).rejects.toMatchObject({ code: Code.UNAVAILABLE, message: 'boom' });
    expect(rows).toHaveLength(2);
    expect(await collect(gsqlQuery(engine, schema, 'S', { start: now() }).rows)).toHaveLength(3);
  });

  it('stops when the client cancels', async () => {
    const { now, engine, token } = setup();
    const ac = new AbortController();
    const q = gsqlQuery(engine, schema, 'S', { start: now(), token, hb: 100000 }, ac.signal);
    setTimeout(() => ac.abort(), 50);
    expect(await collect(q.rows)).toEqual([]);
  });
});
