/**
 * Issue #31 through the functions framework's own server (its Express app and body parsers, as the platform
 * runs them): bodies are bounded before any parser reads them (ADR-2302), and the operator routes refuse
 * what a page of another site can send (ADR-2301).
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { gzipSync } from 'node:zlib';
import { http } from '@google-cloud/functions-framework';
import { handleBackfillRequest } from '../../functions/backfill/routes';
import { createWriterHandler } from '../../functions/writer';
import { createLogger } from '../../shared/domain/log';
import { parseWriterConfig } from '../../shared/domain/writer/config';
import { Harness } from '../app/support/harness';
import { depsOf } from '../app/support/operator-http';
import { harness as writerHarness } from '../app/support/writer-harness';
import { closeServers, serve } from './support/framework-server';

afterAll(async () => {
  await closeServers();
  delete process.env.FUNCTION_TARGET;
});

async function answer(res: Response): Promise<{ status: number; message: string }> {
  const body = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
  return { status: res.status, message: body.error?.message ?? '' };
}

describe('request bodies are bounded before parsing', () => {
  // Each test names the function its process serves; the other files' servers serve none (ADR-3001's direct
  // layer would otherwise answer them with the named function).
  afterEach(() => {
    delete process.env.FUNCTION_TARGET;
  });
  const limits: Array<[string, string, number]> = [
    ['backfill', '/backfills', 64 * 1024],
    ['reader', '/', 64 * 1024],
    ['scheduler', '/', 64 * 1024],
    ['writer', '/mutations', 10 * 1024 * 1024],
  ];

  it.each(limits)('%s refuses a compressed body with 415, before inflating it', async (name, path) => {
    process.env.FUNCTION_TARGET = name;
    const url = await serve(name);
    // 4 MiB of JSON in 4 KiB of gzip: the parsers would inflate it whole.
    const body = gzipSync(Buffer.from(JSON.stringify({ pad: 'x'.repeat(4 * 1024 * 1024) })));
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body,
    });
    expect(await answer(res)).toEqual({
      status: 415,
      message: 'unsupported content encoding "gzip": send the body uncompressed',
    });
  });

  it.each(limits)('%s refuses a Content-Length over its limit with 413', async (name, path, limit) => {
    process.env.FUNCTION_TARGET = name;
    const url = await serve(name);
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pad: 'x'.repeat(limit) }),
    });
    expect(await answer(res)).toEqual({ status: 413, message: `body too large (limit ${limit} bytes)` });
  });

  it.each(limits)('%s refuses a chunked body once it passes the limit', async (name, path, limit) => {
    process.env.FUNCTION_TARGET = name;
    const url = await serve(name);
    const chunk = Buffer.from(`"${'x'.repeat(16 * 1024)}",`);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > limit * 2) return controller.close();
        sent += chunk.length;
        controller.enqueue(sent === chunk.length ? Buffer.concat([Buffer.from('['), chunk]) : chunk);
      },
    });
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(await answer(res)).toEqual({ status: 413, message: `body too large (limit ${limit} bytes)` });
  });
});

describe('the operator routes refuse what another site can send', () => {
  const h = new Harness();
  let url = '';
  let served = 0;
  beforeAll(async () => {
    const name = `backfill-security-${++served}`;
    http(name, async (req, res) => {
      await handleBackfillRequest(depsOf(h), req as never, res as never);
    });
    url = await serve(name);
  });

  const routes = [
    '/backfills',
    '/dead-letters/replay',
    '/dead-letters/discard',
    '/partitions/retry',
    '/tables/forget',
  ];

  it.each(routes)('POST %s as a form or as text/plain is 415', async (path) => {
    for (const [type, body] of [
      ['application/x-www-form-urlencoded', 'tables[0]=Orders&table=Orders'],
      ['text/plain', ''],
      ['multipart/form-data; boundary=x', '--x--'],
    ] as const) {
      const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': type }, body });
      expect((await answer(res)).status).toBe(415);
    }
    const none = await fetch(`${url}${path}`, { method: 'POST' });
    expect(await answer(none)).toEqual({
      status: 415,
      message: 'send the body as application/json (saw "")',
    });
  });

  it('a cross-site or foreign-origin JSON request is 403; a same-origin one runs', async () => {
    /** An empty JSON body posted to `path` with `headers` besides its content type. */
    const post = (path: string, headers: Record<string, string>) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{}',
      });
    const cross = await post('/partitions/retry', { 'sec-fetch-site': 'cross-site' });
    expect(await answer(cross)).toEqual({
      status: 403,
      message: 'cross-site request refused (Sec-Fetch-Site: cross-site)',
    });
    const foreign = await post('/partitions/retry', { origin: 'https://evil.example' });
    expect(await answer(foreign)).toEqual({
      status: 403,
      message: 'cross-origin request refused (Origin: https://evil.example)',
    });
    const rebound = await post('/partitions/retry', { host: 'evil.example', origin: 'http://evil.example' });
    expect((await answer(rebound)).status).toBe(403);
    const own = await post('/dead-letters/replay', { 'sec-fetch-site': 'same-origin', origin: url });
    expect(own.status).toBe(200);
  });

  it('the console forbids framing and inline script: its one script carries the nonce', async () => {
    const res = await fetch(`${url}/`);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline'; style");
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    const page = await res.text();
    expect(page).toContain(`<script nonce="${nonce}">`);
    expect(page).not.toMatch(/onclick=/);
  });
});

describe('the writer names every problem of a request', () => {
  let url = '';
  beforeAll(async () => {
    const h = writerHarness();
    const config = parseWriterConfig({
      SLUICE_PROJECT: 'acme-prod',
      SLUICE_SPANNER_INSTANCE: 'main',
      SLUICE_SPANNER_DATABASE: 'orders',
      SLUICE_LEDGER_BUCKET: 'acme-ledger',
    });
    const instance = { writer: h.writer, config, log: createLogger(() => undefined), close: async () => {} };
    http(
      'writer-security',
      createWriterHandler(async () => instance),
    );
    url = await serve('writer-security');
  });

  const post = (body: string, type = 'application/json') =>
    fetch(`${url}/mutations`, { method: 'POST', headers: { 'content-type': type }, body });

  it('a body sent as a form (curl -d) is 415 naming application/json', async () => {
    const res = await post('{"mutations":[]}', 'application/x-www-form-urlencoded');
    expect(await answer(res)).toEqual({
      status: 415,
      message: 'send the body as application/json (saw "application/x-www-form-urlencoded")',
    });
  });

  it('a bad op is reported with every other problem of the mutation', async () => {
    const res = await post(JSON.stringify({ mutations: [{ op: 'upsert', table: 7, row: 'x' }] }));
    const body = (await res.json()) as { error: { problems: string[] } };
    expect(res.status).toBe(400);
    expect(body.error.problems).toHaveLength(3);
    expect(body.error.problems[0]).toMatch(/^mutations\[0\]\.op: must be one of /);
  });

  it('a value nested 6,000 deep is a 400 naming the depth, not a stack overflow', async () => {
    const deep = `${'['.repeat(6000)}${']'.repeat(6000)}`;
    const res = await post(
      `{"mutations":[{"op":"insert","table":"Accounts","row":{"Id":1,"Name":${deep}}}]}`,
    );
    const body = (await res.json()) as { error: { problems: string[] } };
    expect(res.status).toBe(400);
    expect(body.error.problems).toEqual([
      'body: nested deeper than 84 levels (Spanner keeps a JSON value to 80 levels)',
    ]);
  });
});
