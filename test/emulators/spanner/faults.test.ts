/** Faults injected through the admin handle reach the official client as the service's errors would. */
process.env.METADATA_SERVER_DETECTION = 'none';

import { createTestDatabase, type TestDatabase } from '../../../local/emulators/spanner/client';
import { type RunningSpannerEmulator, startSpannerEmulator } from '../../../local/emulators/spanner/server';

let emu: RunningSpannerEmulator;
let g: TestDatabase;
const ROWS = 30;

beforeAll(async () => {
  emu = await startSpannerEmulator({ port: 0, changeStreams: false });
  g = await createTestDatabase(emu, 'GOOGLE_STANDARD_SQL', [
    'CREATE TABLE T (Id INT64 NOT NULL, V STRING(MAX)) PRIMARY KEY (Id)',
  ]);
  await g.database.table('T').insert(Array.from({ length: ROWS }, (_, i) => ({ Id: String(i), V: `v${i}` })));
});

afterEach(() => emu.admin.faults.clear());

afterAll(async () => {
  await g?.close();
  await emu?.stop();
});

const ids = (rows: unknown[]) => rows.map((r) => Number((r as { Id: number }).Id));
const all = Array.from({ length: ROWS }, (_, i) => i);

test.each([
  [8, 'RESOURCE_EXHAUSTED'],
  [7, 'PERMISSION_DENIED'],
  [3, 'INVALID_ARGUMENT'],
  [13, 'INTERNAL'],
])('code %i on the first ExecuteStreamingSql call surfaces at once', async (code) => {
  emu.admin.faults.add({ method: 'ExecuteStreamingSql', times: 1, code, message: `injected ${code}` });
  const t0 = Date.now();
  await expect(g.database.run('SELECT 1')).rejects.toMatchObject({ code });
  expect(Date.now() - t0).toBeLessThan(1000);
  expect(emu.admin.faults.list()[0]?.fired).toBe(1);
});

test('UNAVAILABLE on the first call is retried by the client and the query succeeds', async () => {
  emu.admin.faults.add({ method: 'ExecuteStreamingSql', times: 1, code: 14 });
  const [rows] = await g.database.run({ sql: 'SELECT Id FROM T ORDER BY Id', json: true });
  expect(ids(rows)).toEqual(all);
  expect(emu.admin.faults.list()[0]?.fired).toBe(1);
});

test('UNAVAILABLE after K rows is resumed with the resume token: every row exactly once', async () => {
  emu.admin.faults.add({ method: 'ExecuteStreamingSql', times: 2, code: 14, afterItems: 7 });
  const [rows] = await g.database.run({ sql: 'SELECT Id FROM T ORDER BY Id', json: true });
  expect(ids(rows)).toEqual(all);
  expect(emu.admin.faults.list()[0]?.fired).toBe(2);
});

test('INTERNAL after K rows surfaces to the client', async () => {
  emu.admin.faults.add({ method: 'ExecuteStreamingSql', times: 1, code: 13, afterItems: 5 });
  const seen: unknown[] = [];
  const err = await new Promise<unknown>((resolve) =>
    g.database
      .runStream({ sql: 'SELECT Id FROM T ORDER BY Id', json: true })
      .on('data', (r) => seen.push(r))
      .on('error', resolve)
      .on('end', () => resolve(undefined)),
  );
  expect(err).toMatchObject({ code: 13 });
  expect(ids(seen)).toEqual(all.slice(0, 5));
});

test('UNAVAILABLE mid-stream on StreamingRead is resumed too', async () => {
  emu.admin.faults.add({ method: 'StreamingRead', times: 1, code: 14, afterItems: 11 });
  const [rows] = await g.database.table('T').read({ keys: all.map(String), columns: ['Id'], json: true });
  expect(ids(rows).sort((a, b) => a - b)).toEqual(all);
});

test('a failed Commit surfaces its code; latency is added', async () => {
  emu.admin.faults.add({ method: 'Commit', times: 1, code: 9 });
  await expect(g.database.table('T').insert({ Id: '999', V: 'x' })).rejects.toMatchObject({ code: 9 });
  emu.admin.faults.add({ method: 'ExecuteStreamingSql', times: 1, delayMs: 300 });
  const t0 = Date.now();
  await g.database.run('SELECT 1');
  expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
});

test('faults can be added over the admin HTTP endpoint', async () => {
  const res = await fetch(`${emu.adminUrl}/faults`, {
    method: 'POST',
    body: JSON.stringify({ method: 'ExecuteStreamingSql', times: 1, code: 8 }),
  });
  expect(res.status).toBe(200);
  await expect(g.database.run('SELECT 1')).rejects.toMatchObject({ code: 8 });
});
