/**
 * The direct layer (ADR-3001): a function registered with `registerDirectHandler` is called, when its process
 * serves it (`FUNCTION_TARGET`), before the functions framework's per-request `domain` — through the
 * framework's own server, with its body parsers, the body guard and the JSON error answers still in front.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { AddressInfo } from 'node:net';
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { registerBodyLimit } from '../../shared/http/body-guard';
import { directHandler, registerDirectHandler } from '../../shared/http/direct';
import { installJsonErrorsAtStart } from '../../shared/http/edge';
import type { HttpRequest, HttpResponse } from '../../shared/http/health';

type Server = ReturnType<typeof getTestServer>;

/** What the probe saw of each request it handled. */
const seen: Array<{ inDomain: boolean; body: unknown }> = [];

const probe = async (req: HttpRequest, res: HttpResponse): Promise<void> => {
  seen.push({
    inDomain: Boolean((process as { domain?: unknown }).domain),
    body: (req as { body?: unknown }).body,
  });
  if (req.path === '/reject') throw new Error('the probe failed after its await');
  res.status(200).json({ ok: true });
};
const throwing = (): void => {
  throw new Error('the probe failed before any await');
};

http('direct-probe', probe);
registerDirectHandler('direct-probe', probe);
registerBodyLimit('direct-probe', 1_000);
http('direct-throwing', throwing);
registerDirectHandler('direct-throwing', throwing);
installJsonErrorsAtStart();

async function serve(name: string): Promise<{ server: Server; url: string }> {
  const server = getTestServer(name);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function postJson(url: string, path: string, body: string) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() };
}

describe('the direct layer', () => {
  const servers: Server[] = [];
  const target = process.env.FUNCTION_TARGET;
  let stdout: jest.SpyInstance;
  beforeEach(() => {
    seen.length = 0;
    stdout = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
  });
  afterEach(() => {
    stdout.mockRestore();
    if (target === undefined) delete process.env.FUNCTION_TARGET;
    else process.env.FUNCTION_TARGET = target;
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  });

  it('calls the function of FUNCTION_TARGET outside any domain, with its body parsed by the framework', async () => {
    process.env.FUNCTION_TARGET = 'direct-probe';
    const { server, url } = await serve('direct-probe');
    servers.push(server);
    const answer = await postJson(url, '/anything', '{"n": 1}');
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ ok: true });
    expect(seen).toEqual([{ inDomain: false, body: { n: 1 } }]);
  });

  it('leaves a function the process does not serve to the framework, inside its domain', async () => {
    process.env.FUNCTION_TARGET = 'another-function';
    const { server, url } = await serve('direct-probe');
    servers.push(server);
    expect((await postJson(url, '/anything', '{"n": 2}')).status).toBe(200);
    expect(seen).toEqual([{ inDomain: true, body: { n: 2 } }]);
  });

  it('keeps the body guard and the JSON parse errors in front of it', async () => {
    process.env.FUNCTION_TARGET = 'direct-probe';
    const { server, url } = await serve('direct-probe');
    servers.push(server);
    const large = await postJson(url, '/anything', JSON.stringify({ text: 'x'.repeat(2_000) }));
    expect(large.status).toBe(413);
    expect(JSON.parse(large.body)).toEqual({
      error: { code: 413, message: 'body too large (limit 1000 bytes)' },
    });
    const malformed = await postJson(url, '/anything', '{"n": ');
    expect(malformed.status).toBe(400);
    expect(malformed.type).toMatch(/^application\/json/);
    expect(seen).toEqual([]);
  });

  it.each([
    ['rejects after an await', 'direct-probe', '/reject'],
    ['throws before any await', 'direct-throwing', '/'],
  ])('answers a function that %s with a JSON 500, once, and logs why', async (_what, name, path) => {
    process.env.FUNCTION_TARGET = name;
    const { server, url } = await serve(name);
    servers.push(server);
    const answer = await postJson(url, path, '{}');
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body)).toEqual({ error: { code: 500, message: 'internal error' } });
    const logged = stdout.mock.calls
      .map((c) => String(c[0]))
      .filter((l) => l.includes(`"event":"${name}.failed"`));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/the probe failed/);
  });

  it.each(['reader', 'writer'])('serves the %s directly when the process is that function', (name) => {
    const module = require(`../../functions/${name}`) as Record<string, unknown>;
    process.env.FUNCTION_TARGET = name;
    expect(directHandler()).toBe(module[name]);
    process.env.FUNCTION_TARGET = 'scheduler';
    expect(directHandler()).toBeUndefined();
    delete process.env.FUNCTION_TARGET;
    expect(directHandler()).toBeUndefined();
  });
});
