/**
 * The service's size limits through the official client: commits up to 100 MiB (a larger request is
 * RESOURCE_EXHAUSTED), cells up to 10 MiB of BYTES or 2,621,440 characters of STRING (or the declared
 * length), values of that size read back exactly by queries, streaming reads and change-stream queries.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { createHash } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../../../local/emulators/spanner/client';
import { type RunningSpannerEmulator, startSpannerEmulator } from '../../../local/emulators/spanner/server';
import { walkDag } from './change-streams/client-read';

const MiB = 1024 * 1024;
const MAX_BYTES = 10 * MiB;
const MAX_CHARS = MAX_BYTES / 4;

let emu: RunningSpannerEmulator;
let g: TestDatabase;

beforeAll(async () => {
  emu = await startSpannerEmulator({ port: 0, churnMs: 0, initialPartitions: 1 });
  g = await createTestDatabase(emu, 'GOOGLE_STANDARD_SQL', [
    `CREATE TABLE Big (Id INT64 NOT NULL, B BYTES(MAX), S STRING(MAX), A ARRAY<STRING(MAX)>, Short STRING(4))
     PRIMARY KEY (Id)`,
    `CREATE TABLE Wide (Id INT64 NOT NULL, ${Array.from({ length: 19 }, (_, i) => `C${i} INT64`).join(', ')})
     PRIMARY KEY (Id)`,
    'CREATE CHANGE STREAM S FOR Big',
  ]);
}, 30_000);

afterAll(async () => {
  await g?.close();
  await emu?.stop();
});

/** `n` deterministic bytes (distinct per seed), cheap to build. */
function bytes(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i + 4 <= n; i += 4096) b.writeUInt32LE((i * 2654435761 + seed) >>> 0, i);
  return b;
}

/** A STRING of exactly `chars` characters mixing one-, two- and four-byte UTF-8 (surrogate pairs). */
function text(chars: number, seed: number): string {
  const unit = `a${String.fromCharCode(0xe9)}\u{1F600}${seed % 10}`; // 4 characters, 5 UTF-16 units
  return unit.repeat(chars / 4);
}

const digest = (v: Buffer | string) => createHash('sha256').update(v).digest('hex');

test('a commit of about 50 MiB with cells at their limits replicates into reads and change records', async () => {
  const rows = [1, 2, 3].map((id) => ({
    Id: String(id),
    B: bytes(MAX_BYTES, id),
    S: text(MAX_CHARS, id),
    A: [text(MAX_CHARS / 8, id), null],
  }));
  const start = emu.admin.nowNs();
  await g.database.table('Big').insert(rows);

  const [queried] = await g.database.run({ sql: 'SELECT Id, B, S, A FROM Big ORDER BY Id', json: true });
  const [read] = await g.database.table('Big').read({ keys: ['3'], columns: ['Id', 'B', 'S'], json: true });
  const got = queried as Array<{ B: Buffer; S: string; A: Array<string | null> }>;
  expect(got.map((r) => [digest(r.B), digest(r.S), r.A[1]])).toEqual(
    rows.map((r) => [digest(r.B), digest(r.S), null]),
  );
  expect(got.map((r) => r.S.length)).toEqual(rows.map((r) => r.S.length));
  expect(digest((read[0] as { B: Buffer }).B)).toBe(digest(rows[2]!.B));
  // Results travel in PartialResultSets of about 1 MiB, large values split across them (chunkedValue).
  const sets: Array<{ chunked: boolean; bytes: number }> = [];
  await new Promise((resolve, reject) =>
    g.database
      .runStream({ sql: 'SELECT B FROM Big WHERE Id = 1' })
      .on('response', (r: { chunkedValue?: boolean; values?: Array<{ stringValue?: string }> }) =>
        sets.push({
          chunked: r.chunkedValue === true,
          bytes: (r.values ?? []).reduce((n, v) => n + (v.stringValue?.length ?? 0), 0),
        }),
      )
      .on('error', reject)
      .on('end', resolve)
      .resume(),
  );
  expect(sets.filter((x) => x.chunked).length).toBeGreaterThanOrEqual(13);
  expect(Math.max(...sets.map((x) => x.bytes))).toBeLessThanOrEqual(MiB);

  const walk = await walkDag(g.database, 'GOOGLE_STANDARD_SQL', 'S', start, emu.admin.nowNs());
  const mods = walk.data.flatMap((r) => r.mods);
  expect(mods.map((m) => m.keys.Id)).toEqual(['1', '2', '3']);
  expect(mods.map((m) => digest(Buffer.from(m.newValues.B as string, 'base64')))).toEqual(
    rows.map((r) => digest(r.B)),
  );
  expect(mods.map((m) => digest(m.newValues.S as string))).toEqual(rows.map((r) => digest(r.S)));
  // Large transactions become several records, each well under the message limit, counted as one transaction.
  expect(walk.data.length).toBe(3);
  expect(walk.data.every((r) => r.numberOfRecordsInTransaction === 3)).toBe(true);
}, 180_000);

test('a cell over its limit fails with FAILED_PRECONDITION naming the column, size and limit', async () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ Id: '10', B: bytes(MAX_BYTES + 1, 1) }, `Big.B, size: ${MAX_BYTES + 1}, limit: ${MAX_BYTES}.`],
    [{ Id: '11', S: `${text(MAX_CHARS, 1)}x` }, `Big.S, size: ${MAX_CHARS + 1}, limit: ${MAX_CHARS}.`],
    [
      { Id: '12', A: ['ok', `${text(MAX_CHARS, 2)}y`] },
      `Big.A, size: ${MAX_CHARS + 1}, limit: ${MAX_CHARS}.`,
    ],
    [{ Id: '13', Short: `abc${String.fromCharCode(0xe9)}x` }, 'Big.Short, size: 5, limit: 4.'],
  ];
  for (const [row, detail] of cases) {
    await expect(g.database.table('Big').insert(row)).rejects.toMatchObject({
      code: 9,
      message: expect.stringContaining(`New value exceeds the maximum size limit for this column: ${detail}`),
    });
  }
  // Four characters of any width fit a STRING(4).
  await g.database.table('Big').insert({ Id: '14', Short: `\u{1F600}${String.fromCharCode(0xe9)}ab` });
}, 60_000);

test('commits over 100 MiB or 80,000 mutations are refused as the service refuses them, writing nothing', async () => {
  const rows = [21, 22, 23, 24, 25, 26, 27, 28].map((id) => ({ Id: String(id), B: bytes(MAX_BYTES, id) }));
  // INVALID_ARGUMENT, which clients do not retry (the transport's RESOURCE_EXHAUSTED would be retried).
  await expect(g.database.table('Big').insert(rows)).rejects.toMatchObject({
    code: 3,
    message: expect.stringContaining(
      'maximum total bytes-size that can be handled by Spanner. Please reduce',
    ),
  });
  // 4,001 rows of 20 columns: 80,020 mutations, one over the limit; without the last row it commits.
  const wide = (id: number) => ({
    Id: String(id),
    ...Object.fromEntries(Array.from({ length: 19 }, (_, c) => [`C${c}`, String(c)])),
  });
  const many = Array.from({ length: 4_001 }, (_, i) => wide(i));
  await expect(g.database.table('Wide').insert(many)).rejects.toMatchObject({
    code: 3,
    message: expect.stringContaining('too many mutations'),
  });
  await g.database.table('Wide').insert(many.slice(1));
  const [big] = await g.database.run({ sql: 'SELECT COUNT(*) AS n FROM Big WHERE Id > 20', json: true });
  const [wideRows] = await g.database.run({ sql: 'SELECT COUNT(*) AS n FROM Wide', json: true });
  expect([big, wideRows]).toEqual([[{ n: 0 }], [{ n: 4_000 }]]);
}, 180_000);
