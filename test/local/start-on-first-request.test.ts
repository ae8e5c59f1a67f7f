/**
 * A function process that starts on the first request to its port (what test stacks do for the backfill and
 * the writer): nothing runs until a request comes, that request is answered by the process it started, a
 * killed process refuses connections until it is started again, and a stop frees the port.
 */
import { join } from 'node:path';
import { bundledFunctionHost } from '../../local/function-bundle';
import { type FunctionLogLine, FunctionProcess } from '../../local/function-process';
import { freePort } from '../../local/ports';

const root = join(__dirname, '..', '..');

async function health(url: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(15_000) });
  return { status: res.status, body: await res.json() };
}

describe('a function process started on the first request', () => {
  let writer: FunctionProcess;
  const lines: FunctionLogLine[] = [];

  beforeAll(async () => {
    const bundle = await bundledFunctionHost(root);
    // No configuration at all: the writer serves and its health check names what is missing.
    const env = { METADATA_SERVER_DETECTION: 'none' };
    writer = new FunctionProcess('writer', await freePort(), env, (l) => lines.push(l), root, bundle);
  });

  afterAll(() => writer.stop());

  it('runs nothing until a request arrives, then answers it from the process it started', async () => {
    await writer.startOnFirstRequest();
    expect({ running: writer.running, starts: writer.starts }).toEqual({ running: false, starts: 0 });
    const [a, b] = await Promise.all([health(writer.url), health(writer.url)]);
    expect(a).toEqual(b);
    expect(a.status).toBe(503);
    expect(JSON.stringify(a.body)).toContain('SLUICE_PROJECT');
    expect({ running: writer.running, starts: writer.starts }).toEqual({ running: true, starts: 1 });
    expect(lines.some((l) => l.json?.message === 'config.invalid')).toBe(true);
  }, 30_000);

  it('refuses connections once killed, until it is started again', async () => {
    await writer.kill();
    await expect(health(writer.url)).rejects.toThrow();
    expect(writer.starts).toBe(1);
    await writer.start();
    expect((await health(writer.url)).status).toBe(503);
    expect(writer.starts).toBe(2);
  }, 30_000);

  it('frees its port when stopped', async () => {
    await writer.stop();
    expect(writer.running).toBe(false);
    await expect(fetch(`${writer.url}/healthz`)).rejects.toThrow();
  }, 30_000);
});
