/**
 * The local stack without a working pipeline yet: emulators up, the demo schema in both dialects, function
 * processes that answer and survive kill / restart, the seeded workload, and the verifier against
 * hand-written BigQuery rows (written through the official Storage Write client).
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { managedwriter } from '@google-cloud/bigquery-storage';
import { demoSchema } from '../../local/demo-schema';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { LOCAL, readyLine } from '../../local/stack-config';
import { verify } from '../../local/verifier';
import { defaultJsonWriter, tablePath } from '../emulators/bigquery/fixtures';

let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({ churnMs: 0 });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

async function health(url: string): Promise<unknown> {
  const res = await fetch(`${url}/healthz`);
  return res.json();
}

it('prints a ready line with every endpoint and the demo tables', () => {
  const line = readyLine(stack.ready);
  expect(line.startsWith('sluice local ready {')).toBe(true);
  const info = JSON.parse(line.slice('sluice local ready '.length));
  expect(info.spanner).toEqual({
    emulatorHost: stack.emulators.spanner.address,
    adminUrl: stack.emulators.spanner.adminUrl,
    projectId: LOCAL.projectId,
    instance: LOCAL.instance,
    database: LOCAL.database,
    dialect: 'GOOGLE_STANDARD_SQL',
  });
  expect(info.bigquery.restEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(info.bigquery.writeEndpoint).toMatch(/^127\.0\.0\.1:\d+$/);
  expect(info.tasks.endpoint).toMatch(/^127\.0\.0\.1:\d+$/);
  for (const emulator of ['spanner', 'bigquery', 'gcs', 'tasks']) {
    expect(info[emulator].adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  }
  expect(Object.keys(info.functions)).toEqual(['scheduler', 'reader', 'backfill', 'writer']);
  expect(info.tables).toContainEqual({ source: 'Products', replica: 'products', history: null });
});

it('runs each function in its own process, and a killed one restarts on the same port', async () => {
  const reader = stack.functions.reader!;
  expect(await health(reader.url)).toEqual({ function: 'reader', ok: true });
  await reader.kill();
  expect(reader.running).toBe(false);
  await expect(fetch(`${reader.url}/healthz`)).rejects.toThrow();
  await reader.restart();
  expect(reader.starts).toBe(2);
  expect(await health(reader.url)).toEqual({ function: 'reader', ok: true });
}, 30_000);

it('creates the change stream over the demo tables, with old and new values', async () => {
  const [rows] = await stack.database.run({
    sql: 'SELECT CHANGE_STREAM_NAME, OPTION_NAME, OPTION_VALUE FROM INFORMATION_SCHEMA.CHANGE_STREAM_OPTIONS',
    json: true,
  });
  expect(rows).toEqual([
    {
      CHANGE_STREAM_NAME: 'DemoChanges',
      OPTION_NAME: 'value_capture_type',
      OPTION_VALUE: 'NEW_ROW_AND_OLD_VALUES',
    },
  ]);
  expect(
    stack.emulators.changeStreams(`projects/${LOCAL.projectId}/instances/local/databases/demo`).partitions()
      .length,
  ).toBe(2);
});

it('serves every emulator admin endpoint the ready line names, churn included', async () => {
  const faults = await fetch(`${stack.ready.gcs.adminUrl}/faults`);
  expect(await faults.json()).toEqual([]);
  const churn = await fetch(`${stack.ready.spanner.adminUrl}/change-streams/churn`, {
    method: 'POST',
    body: '{}',
  });
  expect(churn.status).toBe(200);
  expect(((await churn.json()) as unknown[]).length).toBeGreaterThan(0);
});

it('runs a seeded workload that journals every committed mod', async () => {
  const workload = stack.workload(42);
  for (let i = 0; i < 40; i++) await workload.step();
  expect(workload.stats.failures).toBe(0);
  expect(workload.journal.length).toBe(workload.stats.mods);
  expect(new Set(workload.journal.map((m) => m.modType))).toEqual(new Set(['INSERT', 'UPDATE', 'DELETE']));
  expect(workload.journal.some((m) => m.table === 'Orders')).toBe(true);
  const [[count]] = await stack.database.run({ sql: 'SELECT COUNT(*) AS n FROM Customers', json: true });
  expect(Number((count as { n: unknown }).n)).toBeGreaterThan(0);
  // Nothing replicates yet: the verifier says so instead of throwing.
  const result = await stack.verify(workload.journal);
  expect(result.equal).toBe(false);
  expect(result.histories.find((h) => h.history === 'customers_history')?.missing.count).toBeGreaterThan(0);
}, 30_000);

it('finds BigQuery equal to Spanner row for row, and names the cell that differs', async () => {
  const schema = demoSchema('GOOGLE_STANDARD_SQL');
  await stack.workload(7).prefillProducts(5);
  const bq = stack.emulators.bigquery.bigquery();
  await bq.dataset(LOCAL.dataset).createTable('products', {
    schema: [
      { name: 'sku', type: 'STRING', mode: 'REQUIRED' },
      { name: 'title', type: 'STRING', mode: 'REQUIRED' },
      { name: 'price', type: 'FLOAT64', mode: 'REQUIRED' },
      { name: 'stock', type: 'INT64', mode: 'REQUIRED' },
    ],
  });
  const [rows] = await stack.database.run({ sql: 'SELECT * FROM Products', json: true });
  const client = new managedwriter.WriterClient({
    projectId: LOCAL.projectId,
    apiEndpoint: '127.0.0.1',
    port: stack.emulators.bigquery.grpcPort,
    sslCreds: (await import('@grpc/grpc-js')).credentials.createInsecure(),
  });
  try {
    const { writer } = await defaultJsonWriter(
      client,
      tablePath(stack.emulators.bigquery, LOCAL.dataset, 'products'),
    );
    const written = (rows as Array<Record<string, unknown>>).map((r) => ({
      sku: r.sku as string,
      title: r.title as string,
      price: r.price as number,
      stock: String(r.stock),
    }));
    await writer.appendRows(written).getResult();
    writer.close();
  } finally {
    client.close();
  }
  const input = {
    database: stack.database,
    tables: [schema.products],
    dataset: LOCAL.dataset,
    bigqueryRows: (d: string, t: string) =>
      stack.emulators.bigquery.admin.tableRows(d, t) as Array<Record<string, unknown>>,
  };
  expect((await verify(input)).equal).toBe(true);
  await stack.database.table('Products').update([{ sku: 'SKU-00002', stock: '123456789' }]);
  const diff = await verify(input);
  expect(diff.equal).toBe(false);
  expect(diff.replicas[0]?.different.examples).toEqual([
    expect.objectContaining({ key: '["SKU-00002"]', column: 'stock', spanner: '123456789' }),
  ]);
}, 30_000);

it('creates the PostgreSQL demo schema and runs the workload on it', async () => {
  const pg = await startLocalStack({ dialect: 'POSTGRESQL', functions: false, churnMs: 0 });
  try {
    expect(pg.ready.functions).toEqual({ scheduler: null, reader: null, backfill: null, writer: null });
    const workload = pg.workload(3);
    for (let i = 0; i < 15; i++) await workload.step();
    expect(workload.stats.failures).toBe(0);
    expect(workload.journal.length).toBe(workload.stats.mods);
    expect(pg.schema.ddl.at(-1)).toContain('WITH (value_capture_type = ');
  } finally {
    await pg.stop();
  }
}, 40_000);
