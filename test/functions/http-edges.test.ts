/**
 * Every HTTP edge answers JSON: bodies the functions framework's parsers refuse, bad percent-encoding, wrong
 * methods — through the framework's own server, as the platform and the local stack serve the functions.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { AddressInfo } from 'node:net';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { createReaderHandler } from '../../functions/reader';
import { createWriterHandler } from '../../functions/writer';
import { type ExpressApp, installOn } from '../../shared/http/edge';

require('../../functions/backfill');
require('../../functions/reader');
require('../../functions/scheduler');
require('../../functions/writer');

type Server = ReturnType<typeof getTestServer>;

async function serve(name: string, eager: boolean): Promise<{ server: Server; url: string }> {
  const server = getTestServer(name);
  if (eager) installOn(server.listeners('request')[0] as unknown as ExpressApp);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function send(url: string, init: RequestInit & { path: string }) {
  const res = await fetch(`${url}${init.path}`, init);
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    allow: res.headers.get('allow'),
    text,
  };
}

describe('HTTP edges', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  });

  it.each(['backfill', 'reader', 'scheduler', 'writer'])(
    '%s: malformed JSON, a bad charset and a bad encoding are JSON 400/415, from the first request on',
    async (name) => {
      const { server, url } = await serve(name, true);
      servers.push(server);
      const malformed = await send(url, {
        path: '/backfills',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"tables": ["Products"',
      });
      expect(malformed.status).toBe(400);
      expect(malformed.type).toMatch(/^application\/json/);
      const body = JSON.parse(malformed.text) as { error: { message: string } };
      expect(body.error.message).toMatch(/^malformed JSON body: /);
      expect(malformed.text).not.toMatch(/body-parser|at parse|<pre>/);
      const charset = await send(url, {
        path: '/x',
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=latin-9' },
        body: '{}',
      });
      expect(charset.status).toBe(415);
      expect(charset.type).toMatch(/^application\/json/);
      const encoding = await send(url, {
        path: '/x',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'br2' },
        body: '{}',
      });
      expect(encoding.status).toBe(415);
    },
  );

  it.each(['backfill', 'reader', 'scheduler', 'writer'])(
    '%s on the platform: the very first request of an instance, its body malformed, is answered JSON',
    async (name) => {
      // The framework's own server and app, nothing installed by the test: as the platform starts them.
      const { server, url } = await serve(name, false);
      servers.push(server);
      const malformed = await send(url, {
        path: '/',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"tables": [',
      });
      expect(malformed.status).toBe(400);
      expect(malformed.type).toMatch(/^application\/json/);
      expect(malformed.text).not.toMatch(/<pre>|<!DOCTYPE/);
    },
  );

  it('on the platform the answer is installed by the first request the function sees', async () => {
    const { server, url } = await serve('backfill', false);
    servers.push(server);
    // Whatever it answers (503 here: this test gives the function no configuration), it saw a request.
    expect([200, 503]).toContain((await send(url, { path: '/healthz', method: 'GET' })).status);
    const malformed = await send(url, {
      path: '/backfills',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"tables": [',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.type).toMatch(/^application\/json/);
  });

  it('wrong methods answer 405 with Allow', async () => {
    const answer = () => {
      const out = { status: 0, headers: {} as Record<string, string>, body: undefined as unknown };
      const res = {
        status(code: number) {
          out.status = code;
          return res;
        },
        json(b: unknown) {
          out.body = b;
        },
        set(name: string, value: string) {
          out.headers[name] = value;
        },
      };
      return { out, res };
    };
    const req = (method: string, path: string) => ({ method, path, header: () => undefined });
    const reader = answer();
    await createReaderHandler(() => {
      throw new Error('no app needed');
    })(req('GET', '/'), reader.res);
    expect(reader.out).toMatchObject({ status: 405, headers: { Allow: 'POST' } });
    const writer = answer();
    await createWriterHandler(() => Promise.reject(new Error('no writer needed')))(
      req('PUT', '/mutations'),
      writer.res,
    );
    expect(writer.out).toMatchObject({ status: 405, headers: { Allow: 'POST' } });
  });
});
