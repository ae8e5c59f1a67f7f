/**
 * Change-stream queries through the official client: heartbeats on a quiet partition, a future end that
 * blocks, resume tokens on every PartialResultSet, injected query faults, and every error case of the
 * reference's table with its code.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { v1 } from '@google-cloud/spanner';
import * as grpc from '@grpc/grpc-js';
import { createTestDatabase, type TestDatabase } from '../../../../local/emulators/spanner/client';
import {
  type RunningSpannerEmulator,
  startSpannerEmulator,
} from '../../../../local/emulators/spanner/server';
import type { ChildPartitionsRecord } from '../../../../shared/domain/change-record';
import { type ReadArgs, readStream } from './client-read';

const MS = 1_000_000n;
let emu: RunningSpannerEmulator;
let g: TestDatabase;
let pg: TestDatabase;
let createdNs: bigint;

beforeAll(async () => {
  // retentionCheck off so a 1 s retention_period can make a partition expire within the test.
  emu = await startSpannerEmulator({ port: 0, churnMs: 0, retentionCheck: false });
  g = await createTestDatabase(emu, 'GOOGLE_STANDARD_SQL', [
    'CREATE TABLE T (Id INT64 NOT NULL, V STRING(MAX)) PRIMARY KEY (Id)',
    'CREATE CHANGE STREAM S FOR T',
    "CREATE CHANGE STREAM Brief FOR T OPTIONS (retention_period = '1s')",
    'CREATE CHANGE STREAM Doomed FOR ALL',
    'CREATE CHANGE STREAM Splits FOR T',
  ]);
  createdNs = emu.admin.nowNs();
  pg = await createTestDatabase(emu, 'POSTGRESQL', [
    'CREATE TABLE t (id bigint NOT NULL PRIMARY KEY, v varchar)',
    'CREATE CHANGE STREAM s FOR t',
    'CREATE CHANGE STREAM splits FOR t',
  ]);
});

afterAll(async () => {
  await g?.close();
  await pg?.close();
  await emu?.stop();
});

const read = (args: ReadArgs, stream = 'S') => readStream(g.database, 'GOOGLE_STANDARD_SQL', stream, args);
const tokens = async (
  stream = 'S',
  db = g,
  dialect: 'GOOGLE_STANDARD_SQL' | 'POSTGRESQL' = 'GOOGLE_STANDARD_SQL',
) =>
  (await readStream(db.database, dialect, stream, { start: emu.admin.nowNs() }))
    .flatMap((r) => (r as ChildPartitionsRecord).childPartitions)
    .map((c) => c.token);

test.each(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'] as const)(
  '%s: a quiet partition sends heartbeats, and a future end blocks until it has passed',
  async (dialect) => {
    const db = dialect === 'POSTGRESQL' ? pg : g;
    const stream = dialect === 'POSTGRESQL' ? 's' : 'S';
    const [token] = await tokens(stream, db, dialect);
    const start = emu.admin.nowNs();
    const t0 = Date.now();
    const records = await readStream(db.database, dialect, stream, {
      start,
      end: start + 1200n * MS,
      token,
      heartbeatMs: 250,
    });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1150);
    const beats = records.filter((r) => r.kind === 'heartbeat');
    expect(beats.length).toBeGreaterThanOrEqual(3);
    expect(records.every((r) => r.kind === 'heartbeat')).toBe(true);
    const times = beats.map((b) => (b.kind === 'heartbeat' ? BigInt(b.timestamp) : 0n));
    expect([...times].sort((a, b) => (a < b ? -1 : 1))).toEqual(times);
    expect(times.every((t) => t >= start && t <= start + 1200n * MS)).toBe(true);
  },
);

test.each(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'] as const)(
  '%s: churn reports some splits as one child-partitions record per child, in record_sequence order',
  async (dialect) => {
    const db = dialect === 'POSTGRESQL' ? pg : g;
    const stream = dialect === 'POSTGRESQL' ? 'splits' : 'Splits';
    const forms: number[] = [];
    for (let i = 0; i < 6; i++) {
      const [event] = emu.admin.churnNow({ database: db.name, stream });
      if (event?.op !== 'split') continue;
      const records = await readStream(db.database, dialect, stream, {
        start: event.atNs - 1n,
        end: event.atNs,
        token: event.parents[0] ?? null,
      });
      const ends = records.filter((r): r is ChildPartitionsRecord => r.kind === 'child-partitions');
      // Every record of the end has the split's timestamp; together they name each child once.
      expect(ends.every((r) => BigInt(r.startTimestamp) === event.atNs)).toBe(true);
      expect(ends.flatMap((r) => r.childPartitions.map((c) => c.token)).sort()).toEqual(
        [...event.children].sort(),
      );
      const sequences = ends.map((r) => r.recordSequence);
      expect([...sequences].sort()).toEqual(sequences);
      forms.push(ends.length);
    }
    expect(forms).toEqual(expect.arrayContaining([1, 2]));
  },
);

test('every PartialResultSet of a change-stream query carries a resume token', async () => {
  const client = new v1.SpannerClient({
    servicePath: '127.0.0.1',
    port: emu.port,
    sslCreds: grpc.credentials.createInsecure(),
  });
  const [session] = await client.createSession({ database: g.name });
  const start = emu.admin.nowNs();
  await g.database.table('T').insert({ Id: '1', V: 'a' });
  const stream = client.executeStreamingSql({
    session: session.name,
    sql: 'SELECT ChangeRecord FROM READ_S(@s, @e, NULL, 1000)',
    params: {
      fields: {
        s: { stringValue: new Date(Number(start / MS)).toISOString() },
        e: { stringValue: new Date(Number(start / MS) + 1).toISOString() },
      },
    },
    paramTypes: { s: { code: 'TIMESTAMP' }, e: { code: 'TIMESTAMP' } },
    transaction: { singleUse: { readOnly: { strong: true } } },
  });
  const prs: Array<{ resumeToken?: Uint8Array | string | null }> = [];
  for await (const p of stream) prs.push(p as never);
  expect(prs.length).toBeGreaterThan(0);
  for (const p of prs) expect(Buffer.from(p.resumeToken ?? '').length).toBeGreaterThan(0);
  await client.deleteSession({ name: session.name });
  await client.close();
});

test('a change-stream query can be ended after K records with a code, by handle and over HTTP', async () => {
  emu.admin.endChangeStreamQueryAfter(1, 13, { database: g.name });
  await expect(read({ start: emu.admin.nowNs() })).rejects.toMatchObject({ code: 13 });
  const res = await fetch(`${emu.adminUrl}/change-streams/end-query`, {
    method: 'POST',
    body: JSON.stringify({ k: 0, code: 8, database: g.name }),
  });
  expect(res.status).toBe(200);
  await expect(read({ start: emu.admin.nowNs() })).rejects.toMatchObject({ code: 8 });
  const churned = await fetch(`${emu.adminUrl}/change-streams/churn`, {
    method: 'POST',
    body: JSON.stringify({ database: pg.name }),
  });
  // One churn per stream of the database (s and splits).
  expect(((await churned.json()) as unknown[]).length).toBe(2);
});

describe('every error case of the reference table, with its code', () => {
  const now = () => emu.admin.nowNs();
  test('start_timestamp: too old, before the stream, too far in the future, NULL, after the end', async () => {
    await expect(read({ start: now() - 2n * 86_400_000n * MS })).rejects.toMatchObject({ code: 11 });
    await expect(read({ start: createdNs - 5000n * MS })).rejects.toMatchObject({
      code: 11,
      message: expect.stringMatching(/too far in the past/),
    });
    await expect(read({ start: now() + 11n * 60_000n * MS })).rejects.toMatchObject({
      code: 11,
      message: expect.stringMatching(/too far in the future/),
    });
    await expect(read({ start: null })).rejects.toMatchObject({ code: 3 });
    // The shared query builder refuses an inverted window, so this one is written out.
    const [s, e] = [now(), now() - 1000n * MS].map((t) => new Date(Number(t / MS)).toISOString());
    await expect(
      g.database.run(
        {
          sql: 'SELECT ChangeRecord FROM READ_S(@s, @e, NULL, 1000)',
          params: { s, e },
          types: { s: 'timestamp', e: 'timestamp' },
        },
        { strong: true },
      ),
    ).rejects.toMatchObject({ code: 3, message: expect.stringMatching(/must be <= end_timestamp/) });
  });

  test('partition_token: unknown, start outside its range, fully expired', async () => {
    await expect(read({ start: now(), token: 'bogus' })).rejects.toMatchObject({ code: 3 });
    const [pgToken] = await tokens('s', pg, 'POSTGRESQL');
    await expect(read({ start: now(), token: pgToken })).rejects.toMatchObject({ code: 3 });
    const [token] = await tokens();
    const [event] = emu.admin.churnNow({ database: g.name, stream: 'S' });
    const parent = event?.parents[0] ?? '';
    await expect(read({ start: now(), token: parent })).rejects.toMatchObject({
      code: 11,
      message: expect.stringMatching(/invalid for the partition/),
    });
    expect(token).toBeDefined();
    const [brief] = await tokens('Brief');
    const [ended] = emu.admin.churnNow({ database: g.name, stream: 'Brief' });
    await new Promise((r) => setTimeout(r, 1300));
    await g.database.table('T').insert({ Id: '2', V: 'expire' });
    await expect(read({ start: now(), token: ended?.parents[0] ?? brief }, 'Brief')).rejects.toMatchObject({
      code: 11,
      message: expect.stringMatching(/no longer valid/),
    });
  });

  test('heartbeat NULL or out of range, read_options not NULL, other SQL around the TVF', async () => {
    await expect(read({ start: now(), heartbeatMs: 99 })).rejects.toMatchObject({ code: 11 });
    await expect(read({ start: now(), heartbeatMs: 300_001 })).rejects.toMatchObject({ code: 11 });
    const s = new Date(Number(now() / MS)).toISOString();
    await expect(
      g.database.run(
        {
          sql: 'SELECT ChangeRecord FROM READ_S(@s, NULL, NULL, @hb)',
          params: { s, hb: null },
          types: { s: 'timestamp', hb: 'int64' },
        },
        { strong: true },
      ),
    ).rejects.toMatchObject({ code: 3 });
    await expect(
      g.database.run(
        {
          sql: 'SELECT ChangeRecord FROM READ_S(@s, NULL, NULL, 1000, @ro)',
          params: { s, ro: ['x'] },
          types: { s: 'timestamp', ro: { type: 'array', child: 'string' } },
        },
        { strong: true },
      ),
    ).rejects.toMatchObject({ code: 12 });
    await expect(
      g.database.run(
        { sql: 'SELECT ChangeRecord FROM READ_S(@s, NULL, NULL, 1000) AS x', params: { s } },
        {
          strong: true,
        },
      ),
    ).rejects.toMatchObject({ code: 12 });
  });

  test('transaction: not strong, or multi-use, is rejected', async () => {
    const s = new Date(Number(now() / MS)).toISOString();
    const query = {
      sql: 'SELECT ChangeRecord FROM READ_S(@s, NULL, NULL, 1000)',
      params: { s },
      types: { s: 'timestamp' as const },
    };
    await expect(g.database.run(query)).rejects.toMatchObject({ code: 3 });
    const [snapshot] = await g.database.getSnapshot({ strong: true });
    await expect(snapshot.run(query)).rejects.toMatchObject({ code: 3 });
    snapshot.end();
  });

  test('a dropped stream is NOT_FOUND', async () => {
    const [op] = await g.database.updateSchema(['DROP CHANGE STREAM Doomed']);
    await op.promise();
    await expect(read({ start: now() }, 'Doomed')).rejects.toMatchObject({
      code: 5,
      message: expect.stringMatching(/Change Stream not found/),
    });
  });
});
