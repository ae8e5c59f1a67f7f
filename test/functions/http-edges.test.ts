/**
 * Every HTTP edge answers JSON: bodies the functions framework's parsers refuse, bad percent-encoding, wrong
 * methods — through the framework's own server, as the platform and the local stack serve the functions.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { createReaderHandler } from '../../functions/reader';
import { createWriterHandler } from '../../functions/writer';
import { fakeRequest, fakeResponse } from './support/fakes';
import { closeServers, serve } from './support/framework-server';

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

/** A POST of `body` as JSON to `path`; `headers` go over the JSON content type. */
function post(url: string, path: string, body: string, headers: Record<string, string> = {}) {
  return send(url, {
    path,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
}

/** The answer is a JSON error with `status`. */
function expectJsonError(answer: { status: number; type: string }, status: number): void {
  expect(answer.status).toBe(status);
  expect(answer.type).toMatch(/^application\/json/);
}

describe('HTTP edges', () => {
  afterAll(closeServers);

  it.each(['backfill', 'reader', 'scheduler', 'writer'])(
    '%s: malformed JSON, a bad charset and a bad encoding are JSON 400/415, from the first request on',
    async (name) => {
      const url = await serve(name);
      const malformed = await post(url, '/backfills', '{"tables": ["Products"');
      expectJsonError(malformed, 400);
      const body = JSON.parse(malformed.text) as { error: { message: string } };
      expect(body.error.message).toMatch(/^malformed JSON body: /);
      expect(malformed.text).not.toMatch(/body-parser|at parse|<pre>/);
      const charset = await post(url, '/x', '{}', { 'content-type': 'application/json; charset=latin-9' });
      expectJsonError(charset, 415);
      const encoding = await post(url, '/x', '{}', { 'content-encoding': 'br2' });
      expect(encoding.status).toBe(415);
    },
  );

  it.each(['backfill', 'reader', 'scheduler', 'writer'])(
    '%s on the platform: the very first request of an instance, its body malformed, is answered JSON',
    async (name) => {
      // The framework's own server and app, nothing installed by the test: as the platform starts them.
      const url = await serve(name, false);
      const malformed = await post(url, '/', '{"tables": [');
      expectJsonError(malformed, 400);
      expect(malformed.text).not.toMatch(/<pre>|<!DOCTYPE/);
    },
  );

  it('on the platform the answer is installed by the first request the function sees', async () => {
    const url = await serve('backfill', false);
    // Whatever it answers (503 here: this test gives the function no configuration), it saw a request.
    expect([200, 503]).toContain((await send(url, { path: '/healthz', method: 'GET' })).status);
    expectJsonError(await post(url, '/backfills', '{"tables": ['), 400);
  });

  it('wrong methods answer 405 with Allow', async () => {
    const reader = fakeResponse();
    await createReaderHandler(() => {
      throw new Error('no app needed');
    })(fakeRequest('GET', '/'), reader);
    expect(reader).toMatchObject({ code: 405, headers: { Allow: 'POST' } });
    const writer = fakeResponse();
    await createWriterHandler(() => Promise.reject(new Error('no writer needed')))(
      fakeRequest('PUT', '/mutations'),
      writer,
    );
    expect(writer).toMatchObject({ code: 405, headers: { Allow: 'POST' } });
  });
});
