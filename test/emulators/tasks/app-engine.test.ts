/**
 * App Engine tasks (as the client library's samples create them): accepted with their routing, dispatched to
 * the emulator's `appEngineUrl` with the relative URI and X-AppEngine-* headers, and visibly failing their
 * attempts when no App Engine URL is configured.
 */
process.env['METADATA_SERVER_DETECTION'] = 'none';

import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTasksEmulator } from '../../../local/emulators/tasks/emulator';

const QUEUE = 'projects/p/locations/us-central1/queues/ae';

test('App Engine tasks go to the configured App Engine URL with their relative URI and headers', async () => {
  const hits: Array<{ path: string; headers: IncomingHttpHeaders; body: string }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      hits.push({ path: req.url ?? '', headers: req.headers, body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const emu = await startTasksEmulator({ port: 0, appEngineUrl: url });
  try {
    const client = emu.client();
    const [queue] = await client.createQueue({
      parent: 'projects/p/locations/us-central1',
      queue: { name: QUEUE, appEngineRoutingOverride: { service: 'default' } },
    });
    expect(queue.appEngineRoutingOverride?.service).toBe('default');
    const [task] = await client.createTask({
      parent: QUEUE,
      task: {
        appEngineHttpRequest: { httpMethod: 'POST', relativeUri: '/log_payload', body: Buffer.from('hello') },
      },
    });
    expect(task.appEngineHttpRequest?.relativeUri).toBe('/log_payload');
    expect(task.httpRequest).toBeFalsy();
    await emu.admin.idle();
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ path: '/log_payload', body: 'hello' });
    expect(hits[0]?.headers['x-appengine-queuename']).toBe('ae');
    expect(hits[0]?.headers['x-appengine-taskretrycount']).toBe('0');
  } finally {
    await emu.stop();
    server.close();
  }
});

test('without an App Engine URL an App Engine task fails its attempts, and says why', async () => {
  const emu = await startTasksEmulator({ port: 0, queues: [QUEUE] });
  try {
    const client = emu.client();
    const [task] = await client.createTask({
      parent: QUEUE,
      task: { appEngineHttpRequest: { relativeUri: '/x' } },
    });
    await emu.admin.waitFor(() => (emu.admin.task(task.name as string)?.dispatchCount ?? 0) > 0);
    await emu.admin.waitFor(() => emu.admin.task(task.name as string)?.attempts[0]?.message !== undefined);
    expect(emu.admin.task(task.name as string)?.attempts[0]?.message).toMatch(/--app-engine-url/);
    await expect(
      client.createTask({ parent: QUEUE, task: { appEngineHttpRequest: { relativeUri: 'no-slash' } } }),
    ).rejects.toMatchObject({ code: 3 });
  } finally {
    await emu.stop();
  }
});
