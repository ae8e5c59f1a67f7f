/**
 * End to end through the Cloud Storage and Cloud Tasks emulators with the official clients: the ledger lives in
 * the GCS emulator (GcsObjectStore), reader tasks go through the Tasks emulator (CloudTasksQueue), which
 * dispatches them over loopback HTTP to the real reader function handler; the scheduler is ticked as Cloud
 * Scheduler would. The change stream is the scripted one and the sinks are in memory until the Spanner and
 * BigQuery adapters are wired (see shared/wiring/pipeline-adapters.ts). Faults: GCS 503s and 429s, dispatch
 * failures.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReaderHandler } from '../../functions/reader';
import { type GcsEmulator, startGcsEmulator } from '../../local/emulators/gcs/emulator';
import { startTasksEmulator, type TasksEmulator } from '../../local/emulators/tasks/emulator';
import { GcsObjectStore } from '../../shared/adapters/gcs/object-store';
import { CloudTasksQueue } from '../../shared/adapters/tasks/task-queue';
import { parseConfigObject } from '../../shared/domain/config';
import { createLogger } from '../../shared/domain/log';
import { addMillis, formatTimestamp, fromEpochMillis } from '../../shared/domain/timestamp';
import type { HttpRequest, HttpResponse } from '../../shared/http/health';
import { assembleApp } from '../../shared/wiring/app';
import { MemoryCompleteness, MemoryHistory, MemoryReplica, ScriptCatalog } from '../app/support/ports';
import { prng, ScriptedStream } from '../app/support/script';

const QUEUE = 'projects/local-project/locations/local/queues/readers';
let gcs: GcsEmulator;
let tasks: TasksEmulator;
let server: Server;
const lines: string[] = [];

type Handler = (req: HttpRequest, res: HttpResponse) => Promise<void>;
let handler: Handler = async () => undefined;
const inFlight = new Set<Promise<void>>();

beforeAll(async () => {
  [gcs, tasks] = await Promise.all([
    startGcsEmulator({ port: 0, buckets: ['ledger'] }),
    startTasksEmulator({ port: 0, queues: [QUEUE] }),
  ]);
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const request: HttpRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        body: Buffer.concat(chunks).toString('utf8'),
        header: (name) => {
          const v = req.headers[name.toLowerCase()];
          return Array.isArray(v) ? v[0] : v;
        },
      };
      let code = 200;
      const response: HttpResponse = {
        status(c: number) {
          code = c;
          return response;
        },
        json(b: unknown) {
          res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(b));
        },
      };
      const p = handler(request, response).finally(() => inFlight.delete(p));
      inFlight.add(p);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  // Stop dispatching first, then let requests in flight finish their ledger writes, then stop the rest.
  await tasks.stop();
  await Promise.all([...inFlight]);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await gcs.stop();
});

it('replicates a splitting and merging stream through GCS and Cloud Tasks, under faults', async () => {
  const t0 = fromEpochMillis(Date.now() - 20_000);
  const script = new ScriptedStream(t0, 2);
  const rnd = prng(99);
  for (let i = 1; i <= 150; i++) {
    const at = addMillis(t0, i * 100);
    if (i === 50) script.split(at, script.roots[0]!);
    else if (i === 120) {
      const live = script.live(at);
      script.merge(at, live[0]!.token, live[1]!.token);
    } else script.commit(at, [{ table: 'Orders', id: Math.floor(rnd() * 30), val: `v${i}` }]);
  }
  const port = (server.address() as AddressInfo).port;
  const config = parseConfigObject({
    project: 'local-project',
    spanner: { instance: 'inst', database: 'db', stream: 'Changes' },
    bigquery: { dataset: 'ds' },
    ledger: { bucket: 'ledger' },
    tables: { Orders: { replica: 'orders', history: 'orders_history' } },
    startAt: formatTimestamp(t0),
    heartbeatMs: 1_000,
    leaseMs: 10_000,
    window: { maxMs: 5_000, longPollMs: 1_000 },
  });
  const log = createLogger((l) => lines.push(l), { pipeline: config.pipeline });
  const client = tasks.client();
  const replica = new MemoryReplica();
  const history = new MemoryHistory();
  const app = assembleApp(
    {
      store: new GcsObjectStore(
        gcs
          .storage({ retryOptions: { maxRetries: 5, retryDelayMultiplier: 1, maxRetryDelay: 1 } })
          .bucket('ledger'),
      ),
      queue: new CloudTasksQueue(client, {
        queues: { reader: QUEUE, backfill: QUEUE },
        dispatchDeadlineSeconds: 60,
      }),
      source: script,
      catalog: new ScriptCatalog(script),
      replica,
      history,
      completeness: new MemoryCompleteness(),
    },
    { config, readerUrl: `http://127.0.0.1:${port}/`, retentionMarginMs: 3_600_000, idleDelayMs: 1_000 },
    { now: () => fromEpochMillis(Date.now()), log },
  );
  handler = createReaderHandler(() => app);
  gcs.admin.fail({ method: 'objects.insert', times: 2, code: 503 });
  tasks.admin.fail({ method: 'dispatch', times: 2, code: 503 });
  replica.faults.fail(1);

  const last = script.last;
  let status = (await app.scheduler.tick()).status;
  gcs.admin.fail({ method: 'objects.list', times: 1, code: 429 });
  for (let i = 0; i < 60; i++) {
    await new Promise((r) => setTimeout(r, 250));
    status = (await app.scheduler.tick()).status;
    if (
      status?.watermark &&
      status.watermark > formatTimestamp(last) &&
      status.partitions.ready + status.partitions.leased > 0
    )
      break;
  }
  expect((status?.watermark ?? '') > formatTimestamp(last)).toBe(true);
  const expected = [...(script.rows.get('Orders')?.values() ?? [])].sort(
    (a, b) => Number(a.Id) - Number(b.Id),
  );
  expect(replica.rows('orders')).toEqual(expected);
  const mods = [...script.parts.values()].flatMap((p) => p.records).reduce((n, r) => n + r.mods.length, 0);
  expect(history.distinct('orders_history')).toBe(mods);
  expect(status?.partitions.failed).toBe(0);
  const attempts = tasks.admin.tasks(QUEUE).flatMap((t) => t.attempts);
  expect(attempts.length).toBeGreaterThan(3);
  expect(gcs.admin.faults().every((f) => f.fired > 0)).toBe(true);
  handler = async () => undefined;
  await client.close();
}, 40_000);
