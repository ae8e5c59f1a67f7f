/**
 * `--data-dir`: every emulator restarted on the same directory gives back its state through the official
 * clients — Spanner rows, schema, change records and partition tokens; GCS buckets and object versions;
 * Tasks queues, scheduled tasks and reserved names; BigQuery tables, applied rows and an uncommitted
 * pending stream — and the CLI's `npm run emulators -- --data-dir` does the same for a whole set.
 */
process.env.METADATA_SERVER_DETECTION = 'none';
delete process.env.STORAGE_EMULATOR_HOST;

import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { managedwriter } from '@google-cloud/bigquery-storage';
import { Spanner } from '@google-cloud/spanner';
import { startBigQueryEmulator } from '../../local/emulators/bigquery/emulator';
import { startGcsEmulator } from '../../local/emulators/gcs/emulator';
import { startLineageEmulator } from '../../local/emulators/lineage/emulator';
import { createTestDatabase, emulatorClient } from '../../local/emulators/spanner/client';
import { startSpannerEmulator } from '../../local/emulators/spanner/server';
import { startTasksEmulator } from '../../local/emulators/tasks/emulator';
import { toStruct } from '../../shared/domain/lineage/struct';
import { bigQueryCalls, defaultJsonWriter, descriptorFor, ok, tablePath } from './bigquery/fixtures';
import { rejection } from './common/rejection';
import { walkDag } from './spanner/change-streams/client-read';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'emulator-data-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('Spanner: rows, schema, change records and partition tokens survive a restart', async () => {
  const dataDir = join(dir, 'spanner');
  const emu = await startSpannerEmulator({ port: 0, churnMs: 0, dataDir });
  const g = await createTestDatabase(emu, 'GOOGLE_STANDARD_SQL', [
    `CREATE TABLE T (K INT64 NOT NULL, F FLOAT64, B BYTES(MAX), N NUMERIC,
     At TIMESTAMP OPTIONS (allow_commit_timestamp = true)) PRIMARY KEY (K)`,
    'CREATE CHANGE STREAM S FOR T',
  ]);
  const start = emu.admin.nowNs();
  const t = g.database.table('T');
  await t.insert({
    K: '-9223372036854775808',
    F: Number.NaN,
    B: Buffer.from([0, 255]),
    N: Spanner.numeric('-1.5'),
  });
  await t.insert({ K: '9223372036854775807', F: Number.POSITIVE_INFINITY, At: Spanner.COMMIT_TIMESTAMP });
  await t.insert({ K: '0', F: 0.5 });
  emu.admin.churnNow();
  await t.update([{ K: '0', F: 1.5 }]);
  await t.deleteRows(['9223372036854775807']);
  const end = emu.admin.nowNs();
  const query = { sql: 'SELECT * FROM T ORDER BY K', json: true, jsonOptions: { wrapNumbers: true } };
  const [rowsBefore] = await g.database.run(query);
  const dagBefore = await walkDag(g.database, 'GOOGLE_STANDARD_SQL', 'S', start, end);
  const [ddlBefore] = await g.database.getSchema();
  const [instanceId, databaseId] = [
    g.instance.formattedName_.split('/').pop() as string,
    g.name.split('/').pop() as string,
  ];
  await g.close();
  await emu.stop();
  appendFileSync(join(dataDir, 'journal.jsonl'), '{"k":"ses'); // a write torn by a kill is ignored

  const again = await startSpannerEmulator({ port: 0, churnMs: 0, dataDir });
  const client = emulatorClient(again);
  const database = client.instance(instanceId).database(databaseId);
  try {
    expect((await database.run(query))[0]).toEqual(rowsBefore);
    expect((await database.getSchema())[0]).toEqual(ddlBefore);
    expect(await walkDag(database, 'GOOGLE_STANDARD_SQL', 'S', start, end)).toEqual(dagBefore);
    expect(dagBefore.data.length).toBe(5);
    await database.table('T').insert([{ K: '7' }]);
    expect(again.admin.nowNs()).toBeGreaterThan(end);
  } finally {
    await database.close();
    client.close();
    await again.stop();
  }
}, 60000);

test('GCS: buckets, object versions, metadata and bytes survive a restart; replaced bytes are removed', async () => {
  const dataDir = join(dir, 'gcs');
  const first = await startGcsEmulator({ port: 0, dataDir, buckets: ['ledger'] });
  const storage = first.storage();
  const [bucket] = await storage.createBucket('kept', { versioning: { enabled: true }, labels: { a: '1' } });
  await bucket.file('doc').save('one', { resumable: false, metadata: { metadata: { k: 'v' } } });
  await bucket.file('doc').save('two', { resumable: false });
  await storage.bucket('ledger').file('x').save('ledger entry', { resumable: false });
  for (let i = 0; i < 5; i++)
    await storage.bucket('ledger').file('churn').save(`v${i}`, { resumable: false });
  await first.stop();

  const second = await startGcsEmulator({ port: 0, dataDir, buckets: ['ledger'] });
  try {
    const s = second.storage();
    const [meta] = await s.bucket('kept').getMetadata();
    expect(meta).toMatchObject({ labels: { a: '1' }, versioning: { enabled: true } });
    const [versions] = await s.bucket('kept').getFiles({ versions: true });
    expect(versions.map((f) => f.metadata.metadata)).toEqual([{ k: 'v' }, undefined]);
    const old = s.bucket('kept').file('doc', { generation: versions[0]?.metadata.generation as string });
    expect((await old.download())[0].toString()).toBe('one');
    expect((await s.bucket('ledger').file('churn').download())[0].toString()).toBe('v4');
    expect(readdirSync(join(dataDir, 'blobs'))).toHaveLength(4);
    await s.bucket('kept').file('doc').save('three', { resumable: false });
    expect((await s.bucket('kept').file('doc').download())[0].toString()).toBe('three');
  } finally {
    await second.stop();
  }
});

test('Tasks: queues, scheduled tasks and reserved names survive a restart', async () => {
  const dataDir = join(dir, 'tasks');
  const queue = 'projects/p/locations/l/queues/q';
  const first = await startTasksEmulator({ port: 0, dataDir, queues: [queue] });
  const client = first.client();
  await client.updateQueue({ queue: { name: queue, rateLimits: { maxDispatchesPerSecond: 3 } } });
  const later = { seconds: Math.floor(Date.now() / 1000) + 3600 };
  const task = {
    httpRequest: { url: 'http://127.0.0.1:9/never', body: Buffer.from('payload') },
    scheduleTime: later,
  };
  await client.createTask({ parent: queue, task: { ...task, name: `${queue}/tasks/kept` } });
  await client.createTask({ parent: queue, task: { ...task, name: `${queue}/tasks/gone` } });
  await client.deleteTask({ name: `${queue}/tasks/gone` });
  await first.stop();

  const second = await startTasksEmulator({ port: 0, dataDir, queues: [queue] });
  try {
    const c = second.client();
    const [q] = await c.getQueue({ name: queue });
    expect(q.rateLimits?.maxDispatchesPerSecond).toBe(3);
    const [tasks] = await c.listTasks({ parent: queue, responseView: 'FULL' });
    expect(tasks.map((x) => x.name)).toEqual([`${queue}/tasks/kept`]);
    expect(Buffer.from(tasks[0]?.httpRequest?.body as Uint8Array).toString()).toBe('payload');
    const again = await rejection<{ code: number }>(
      c.createTask({ parent: queue, task: { ...task, name: `${queue}/tasks/gone` } }),
    );
    expect(again.code).toBe(6);
    // A restored task whose target moved (the local stack's functions listen on new ports) is pointed at it.
    // Moves apply once per task: 9 → 8 and 8 → 7 in one call leave the task at 8.
    const moves: Array<[string, string]> = [
      ['http://127.0.0.1:9/', 'http://127.0.0.1:8/'],
      ['http://127.0.0.1:8/', 'http://127.0.0.1:7/'],
    ];
    expect(second.admin.retarget(moves)).toBe(1);
    expect(second.admin.task(`${queue}/tasks/kept`)?.url).toBe('http://127.0.0.1:8/never');
  } finally {
    await second.stop();
  }
});

test('BigQuery: tables, views, applied rows and an uncommitted pending stream survive a restart', async () => {
  const dataDir = join(dir, 'bigquery');
  const schema = {
    fields: [
      { name: 'id', type: 'INTEGER', mode: 'REQUIRED' },
      { name: 'v', type: 'STRING' },
    ],
  };
  const first = await startBigQueryEmulator({ dataDir });
  for (const r of await bigQueryCalls(first, [
    { op: 'createDataset', dataset: 'd' },
    { op: 'createTable', dataset: 'd', table: 't', options: { schema } },
    {
      op: 'createTable',
      dataset: 'd',
      table: 'named',
      options: { view: { query: 'SELECT id FROM d.t WHERE v IS NOT NULL', useLegacySql: false } },
    },
  ]))
    ok(r);
  const parent = tablePath(first, 'd', 't');
  const w1 = first.writerClient();
  const { writer } = await defaultJsonWriter(w1, parent);
  await writer.appendRows([{ id: 1, v: 'a' }, { id: 2 }]).getResult();
  writer.close();
  const connection = await w1.createStreamConnection({
    streamType: managedwriter.PendingStream,
    destinationTable: parent,
  });
  const pending = new managedwriter.JSONWriter({
    connection,
    protoDescriptor: await descriptorFor(w1, parent),
  });
  await pending.appendRows([{ id: 3, v: 'later' }], 0).getResult();
  const streamId = connection.getStreamId();
  pending.close();
  await first.stop();

  const second = await startBigQueryEmulator({ dataDir });
  try {
    expect(second.admin.tableRows('d', 't')).toEqual([
      { id: 1n, v: 'a' },
      { id: 2n, v: null },
    ]);
    const w2 = second.writerClient();
    const c2 = await w2.createStreamConnection({ streamId });
    expect((await c2.finalize())?.rowCount).toBe('1');
    const commit = await w2.batchCommitWriteStream({ parent, writeStreams: [streamId] });
    expect(commit.streamErrors ?? []).toEqual([]);
    expect(second.admin.tableRows('d', 't').map((r) => r.id)).toEqual([1n, 2n, 3n]);
    const [meta, view, named] = await bigQueryCalls(second, [
      { op: 'getMetadata', dataset: 'd', table: 't' },
      { op: 'getMetadata', dataset: 'd', table: 'named' },
      { op: 'query', query: 'SELECT id FROM d.named ORDER BY id' },
    ]);
    expect(ok<{ schema: unknown }>(meta).schema).toEqual(schema);
    expect(ok<{ type: string }>(view).type).toBe('VIEW');
    expect(ok(named)).toEqual([{ id: 1 }, { id: 3 }]);
  } finally {
    await second.stop();
  }
}, 60000);

function startCli(
  dataDir: string,
): Promise<{ child: ChildProcess; addresses: Record<string, Record<string, string>> }> {
  const cli = join(__dirname, '..', '..', 'local', 'emulators', 'cli.ts');
  const child = spawn(process.execPath, [require.resolve('tsx/cli'), cli, 'all', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /emulators ready (\{.*\})/.exec(out);
      if (m) resolve({ child, addresses: JSON.parse(m[1] as string) });
    });
    child.on('exit', (code) => reject(new Error(`emulators exited with ${code}: ${out}`)));
  });
}

test('Lineage: processes, runs, lineage events and request-id answers survive a restart', async () => {
  const dataDir = join(dir, 'lineage');
  const parent = 'projects/p/locations/us';
  const event = (eventType: string) =>
    toStruct({
      eventType,
      eventTime: '2026-12-01T00:00:00.123456789Z',
      producer: 'https://example.com/sluice',
      job: { namespace: 'sluice://p', name: 'pipeline' },
      run: { runId: '0b8c5e6a-3f1d-4c2e-9a7b-1d2e3f4a5b6c' },
      inputs: [{ namespace: 'spanner://p', name: 'Orders' }],
      outputs: [{ namespace: 'bigquery', name: 'p.ds.orders' }],
    });
  const first = await startLineageEmulator({ port: 0, dataDir });
  const [started] = await first.client().processOpenLineageRunEvent({
    parent,
    openLineage: event('START'),
    requestId: 'r1',
  });
  await first.client().processOpenLineageRunEvent({ parent, openLineage: event('COMPLETE') });
  await first.stop();

  const second = await startLineageEmulator({ port: 0, dataDir });
  try {
    const c = second.client();
    const [runs] = await c.listRuns({ parent: started.process as string });
    expect(runs.map((r) => [r.name, r.state])).toEqual([[started.run, 'COMPLETED']]);
    const [events] = await c.listLineageEvents({ parent: started.run as string });
    expect(events).toHaveLength(2);
    const [again] = await c.processOpenLineageRunEvent({
      parent,
      openLineage: event('START'),
      requestId: 'r1',
    });
    expect(again).toMatchObject({ process: started.process, run: started.run });
    expect(second.admin.events()).toHaveLength(2);
  } finally {
    await second.stop();
  }
});

test('npm run emulators -- --data-dir keeps each emulator in its own directory', async () => {
  const dataDir = join(dir, 'cli');
  const run = await startCli(dataDir);
  const gcsUrl = run.addresses.gcs?.http as string;
  const created = await fetch(`${gcsUrl}/storage/v1/b?project=p`, {
    method: 'POST',
    body: JSON.stringify({ name: 'cli-bucket' }),
  });
  expect(created.status).toBe(200);
  const exited = new Promise((r) => run.child.once('exit', r));
  run.child.kill('SIGTERM');
  await exited;
  expect(readdirSync(dataDir).sort()).toEqual([
    'bigquery',
    'emulators-ports.json',
    'gcs',
    'lineage',
    'spanner',
    'tasks',
  ]);
  const again = await startCli(dataDir);
  try {
    const got = await fetch(`${again.addresses.gcs?.http}/storage/v1/b/cli-bucket`);
    expect(got.status).toBe(200);
  } finally {
    const done = new Promise((r) => again.child.once('exit', r));
    again.child.kill('SIGTERM');
    await done;
  }
}, 60000);
