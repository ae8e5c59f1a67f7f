/**
 * The dispatcher as a target sees it, with tasks created through the unmodified `@google-cloud/tasks`
 * client: request shape and headers, OIDC token, retries with the RetryConfig backoff, give-up, dispatch
 * deadline, dropped connections, rate and concurrency limits, scheduled and forced runs.
 */
process.env['METADATA_SERVER_DETECTION'] = 'none';

import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CloudTasksClient } from '@google-cloud/tasks';
import { startTasksEmulator, type TasksEmulator } from '../../../local/emulators/tasks/emulator';

/** One request the target received. */
interface Hit {
  atMs: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A loopback HTTP target; `respond` decides each answer (by hit index within its path). */
class Target {
  readonly hits: Hit[] = [];
  active = 0;
  maxActive = 0;
  private server?: Server;
  url = '';
  respond: (hit: Hit, n: number, res: ServerResponse) => void = (_h, _n, res) => res.writeHead(200).end();

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const hit = {
          atMs: Date.now(),
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
        };
        this.hits.push(hit);
        this.active += 1;
        this.maxActive = Math.max(this.maxActive, this.active);
        res.on('close', () => (this.active -= 1));
        this.respond(hit, this.hits.filter((h) => h.path === hit.path).length - 1, res);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  on(path: string): Hit[] {
    return this.hits.filter((h) => h.path === path);
  }

  stop(): Promise<void> {
    this.server?.closeAllConnections();
    return new Promise((resolve) => this.server?.close(() => resolve()));
  }
}

const location = 'projects/demo/locations/us-central1';
let emulator: TasksEmulator;
let client: CloudTasksClient;
const target = new Target();

beforeAll(async () => {
  emulator = await startTasksEmulator({ port: 0, minDispatchDeadlineMs: 50 });
  client = emulator.client();
  await target.start();
});
afterAll(async () => {
  await emulator.stop();
  await target.stop();
});

let queueSeq = 0;
async function queue(config: Record<string, unknown> = {}): Promise<string> {
  const name = `${location}/queues/d-${++queueSeq}`;
  await client.createQueue({ parent: location, queue: { name, ...config } });
  return name;
}

const fast = {
  retryConfig: { minBackoff: { nanos: 100_000_000 }, maxBackoff: { nanos: 400_000_000 }, maxDoublings: 2 },
};

test('a dispatch carries body, headers, X-CloudTasks-* and an OIDC token; 2xx completes the task', async () => {
  const parent = await queue();
  const name = `${parent}/tasks/hello-1`;
  const [created] = await client.createTask({
    parent,
    task: {
      name,
      httpRequest: {
        url: `${target.url}/hello`,
        headers: { 'Content-Type': 'application/json', 'User-Agent': 'me' },
        body: Buffer.from('{"partition":"p1"}'),
        oidcToken: {
          serviceAccountEmail: 'invoker@demo.iam.gserviceaccount.com',
          audience: 'https://reader',
        },
      },
    },
  });
  await emulator.admin.waitFor(() => emulator.admin.task(name)?.outcome === 'succeeded');
  const [hit] = target.on('/hello');
  expect(hit?.method).toBe('POST');
  expect(hit?.body).toBe('{"partition":"p1"}');
  expect(hit?.headers).toMatchObject({
    'content-type': 'application/json',
    'user-agent': 'Google-Cloud-Tasks',
    'x-cloudtasks-queuename': parent.split('/').pop(),
    'x-cloudtasks-taskname': 'hello-1',
    'x-cloudtasks-taskretrycount': '0',
    'x-cloudtasks-taskexecutioncount': '0',
  });
  const eta = Number(hit?.headers['x-cloudtasks-tasketa']);
  expect(Math.abs(eta - Number(created.scheduleTime?.seconds))).toBeLessThan(1.001);
  const [, payload] = String(hit?.headers.authorization)
    .replace(/^Bearer /, '')
    .split('.');
  const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString());
  expect(claims).toMatchObject({ aud: 'https://reader', email: 'invoker@demo.iam.gserviceaccount.com' });
  expect(claims.exp).toBeGreaterThan(claims.iat);
  expect(await client.getTask({ name }).catch((e: { code: number }) => e.code)).toBe(5);
});

test('failures are retried with the RetryConfig backoff, observed at the target', async () => {
  const parent = await queue(fast);
  target.respond = (_h, n, res) => res.writeHead([503, 404, 500, 500, 200][n] ?? 200).end();
  const [task] = await client.createTask({ parent, task: { httpRequest: { url: `${target.url}/retry` } } });
  await emulator.admin.waitFor(() => emulator.admin.task(String(task.name))?.outcome === 'succeeded');
  const hits = target.on('/retry');
  expect(hits.map((h) => h.headers['x-cloudtasks-taskretrycount'])).toEqual(['0', '1', '2', '3', '4']);
  // 5xx answers do not count as executions; the 404 does.
  expect(hits.map((h) => h.headers['x-cloudtasks-taskexecutioncount'])).toEqual(['0', '0', '1', '1', '1']);
  expect(hits[1]?.headers['x-cloudtasks-taskpreviousresponse']).toBe('503');
  const gaps = hits.slice(1).map((h, i) => h.atMs - (hits[i]?.atMs ?? 0));
  [100, 200, 400, 400].forEach((expected, i) => {
    expect(gaps[i]).toBeGreaterThanOrEqual(expected - 5);
    expect(gaps[i]).toBeLessThan(expected + 250);
  });
  target.respond = (_h, _n, res) => res.writeHead(200).end();
});

test('the retry config gives up after maxAttempts', async () => {
  const parent = await queue({ retryConfig: { ...fast.retryConfig, maxAttempts: 3 } });
  target.respond = (_h, _n, res) => res.writeHead(500).end();
  const [task] = await client.createTask({ parent, task: { httpRequest: { url: `${target.url}/doomed` } } });
  await emulator.admin.waitFor(() => emulator.admin.task(String(task.name))?.outcome === 'failed');
  await new Promise((r) => setTimeout(r, 500));
  expect(target.on('/doomed')).toHaveLength(3);
  expect(emulator.admin.task(String(task.name))?.attempts.map((a) => a.code)).toEqual([13, 13, 13]);
  target.respond = (_h, _n, res) => res.writeHead(200).end();
});

test('a timeout past the dispatch deadline and a dropped connection are retried', async () => {
  const parent = await queue(fast);
  target.respond = (hit, n, res) => {
    if (hit.path === '/slow' && n === 0) setTimeout(() => res.writeHead(200).end(), 400);
    else if (hit.path === '/drop' && n === 0) res.socket?.destroy();
    else res.writeHead(200).end();
  };
  const deadline = { seconds: 0, nanos: 150_000_000 };
  const [slow] = await client.createTask({
    parent,
    task: { httpRequest: { url: `${target.url}/slow` }, dispatchDeadline: deadline },
  });
  const [drop] = await client.createTask({ parent, task: { httpRequest: { url: `${target.url}/drop` } } });
  await emulator.admin.waitFor(() =>
    [slow, drop].every((t) => emulator.admin.task(String(t.name))?.outcome === 'succeeded'),
  );
  expect(emulator.admin.task(String(slow.name))?.attempts.map((a) => a.code)).toEqual([4, 0]);
  expect(emulator.admin.task(String(drop.name))?.attempts.map((a) => a.code)).toEqual([14, 0]);
  target.respond = (_h, _n, res) => res.writeHead(200).end();
});

test('maxDispatchesPerSecond and the burst bound the dispatch rate', async () => {
  const parent = await queue({ rateLimits: { maxDispatchesPerSecond: 5 } });
  await client.pauseQueue({ name: parent });
  const names: string[] = [];
  for (let i = 0; i < 10; i++) {
    const [task] = await client.createTask({ parent, task: { httpRequest: { url: `${target.url}/rate` } } });
    names.push(String(task.name));
  }
  await client.resumeQueue({ name: parent });
  await emulator.admin.waitFor(() => target.on('/rate').length === 10, 5000);
  // The service's own dispatch times (the attempts' dispatch_time), not when the target got the requests:
  // on a busy machine requests sent 200 ms apart can arrive together.
  const times = names
    .map((n) => emulator.admin.task(n)?.attempts[0]?.dispatchTimeMs ?? Number.NaN)
    .sort((a, b) => a - b);
  const first = times[0] ?? 0;
  expect(times.filter((t) => t - first < 150)).toHaveLength(5); // the burst (5 at 5/s)
  expect((times[9] ?? 0) - first).toBeGreaterThanOrEqual(950); // then one per 200 ms
});

test('maxConcurrentDispatches caps requests in flight', async () => {
  const parent = await queue({ rateLimits: { maxConcurrentDispatches: 2 } });
  target.maxActive = 0;
  target.respond = (_h, _n, res) => setTimeout(() => res.writeHead(200).end(), 100);
  for (let i = 0; i < 6; i++)
    await client.createTask({ parent, task: { httpRequest: { url: `${target.url}/conc` } } });
  await emulator.admin.waitFor(
    () => emulator.admin.tasks(parent).every((t) => t.outcome === 'succeeded'),
    5000,
  );
  expect(target.on('/conc')).toHaveLength(6);
  expect(target.maxActive).toBe(2);
  target.respond = (_h, _n, res) => res.writeHead(200).end();
});

test('scheduleTime delays the first dispatch; RunTask forces one even on a paused queue', async () => {
  const parent = await queue();
  const at = Date.now() + 400;
  const scheduleTime = { seconds: Math.floor(at / 1000), nanos: (at % 1000) * 1e6 };
  await client.createTask({ parent, task: { scheduleTime, httpRequest: { url: `${target.url}/later` } } });
  await emulator.admin.waitFor(() => target.on('/later').length === 1, 3000);
  expect(target.on('/later')[0]?.atMs).toBeGreaterThanOrEqual(at - 5);
  await client.pauseQueue({ name: parent });
  const [task] = await client.createTask({ parent, task: { httpRequest: { url: `${target.url}/forced` } } });
  await new Promise((r) => setTimeout(r, 100));
  expect(target.on('/forced')).toHaveLength(0);
  await client.runTask({ name: task.name });
  await emulator.admin.waitFor(() => target.on('/forced').length === 1, 3000);
});

test('a dispatch fault fails attempts before they reach the target', async () => {
  const parent = await queue(fast);
  emulator.admin.fail({ method: 'dispatch', times: 2, code: 503 });
  const [task] = await client.createTask({ parent, task: { httpRequest: { url: `${target.url}/faulted` } } });
  await emulator.admin.waitFor(() => emulator.admin.task(String(task.name))?.outcome === 'succeeded');
  expect(target.on('/faulted').map((h) => h.headers['x-cloudtasks-taskretrycount'])).toEqual(['2']);
});
