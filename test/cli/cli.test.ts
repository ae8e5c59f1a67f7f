/**
 * `npx sluice` against the local stack: status, a backfill started and waited for with its progress bar,
 * list / show / cancel, refusals; the failure-handling routes against a recording server (the operator
 * function does not serve them yet); authentication headers.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { promisify } from 'node:util';
import { main } from '../../cli/main';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { ROOT, runSluice } from './support/child';

let stack: LocalStack;
let url: string;

beforeAll(async () => {
  stack = await startLocalStack({ churnMs: 0 });
  url = stack.ready.functions.backfill!;
  await stack.workload(5).prefillProducts(60);
  for (let i = 0; i < 20 && (await stack.tick()).status !== 200; i++)
    await new Promise((r) => setTimeout(r, 500));
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

/** A backfill of Products into the replica, waited for and polled every 200 ms. */
const START_PRODUCTS = [
  'backfill',
  'start',
  'Products',
  '--targets',
  'replica',
  '--wait',
  '--interval',
  '200',
];

async function sluice(...argv: string[]): Promise<{ code: number; out: string; progress: string[] }> {
  const lines: string[] = [];
  const progress: string[] = [];
  const code = await main(argv, {}, { out: (l) => lines.push(l), progress: (l) => progress.push(l) });
  return { code, out: lines.join('\n'), progress };
}

it('shows the pipeline status', async () => {
  const { code, out } = await sluice('status', '--url', url);
  expect(code).toBe(0);
  expect(out).toMatch(/^pipeline {4}sluice {2}(running|starting)/);
  expect(out).toMatch(/partitions {2}waiting \d+ {2}ready \d+/);
  const json = await sluice('status', '--url', url, '--json');
  expect(JSON.parse(json.out)).toMatchObject({ pipeline: 'sluice', partitions: expect.any(Object) });
});

it('starts a backfill and waits for it with a progress bar, then lists and shows it', async () => {
  const { code, out, progress } = await sluice(...START_PRODUCTS, '--url', url);
  expect(out).toMatch(/^backfill \w+ at \d{4}-\d\d-\d\dT[\d:.]+Z: \d+ partitions/);
  expect(progress.at(-1)).toMatch(
    /^\[#{30}\] 100% {2}partitions (\d+)\/\1 {2}rows 60 {2}\d+ rows\/s {2}succeeded$/,
  );
  expect(code).toBe(0);
  const id = /^backfill (\w+)/.exec(out)![1]!;
  expect((await sluice('backfill', 'list', '--url', url)).out).toContain(`${id}  succeeded`);
  expect((await sluice('backfill', 'show', id, '--url', url)).out).toMatch(
    new RegExp(`^${id}  succeeded  Products  partitions`),
  );
}, 60_000);

it('cancels a backfill', async () => {
  const started = await sluice('backfill', 'start', 'Products', '--url', url, '--json');
  const id = (JSON.parse(started.out) as { id: string }).id;
  const cancelled = await sluice('backfill', 'cancel', id, '--url', url);
  expect(cancelled.code).toBe(0);
  expect(cancelled.out).toMatch(new RegExp(`^${id}  (cancelled|succeeded)`));
  // One job per page: the list follows nextPageToken to the older job of the previous test (ADR-2308).
  const listed = await sluice('backfill', 'list', '--page-size', '1', '--url', url, '--json');
  const jobs = (JSON.parse(listed.out) as { backfills: Array<{ id: string }> }).backfills;
  expect(jobs.length).toBeGreaterThanOrEqual(2);
  expect(jobs[0]!.id).toBe(id);
}, 30_000);

it("refuses bad command lines (exit 2) and reports the function's errors (exit 1)", async () => {
  expect((await sluice('backfill', 'start', '--url', url)).code).toBe(2);
  expect((await sluice('frobnicate', '--url', url)).out).toContain('unknown command "frobnicate"');
  expect((await sluice('status')).out).toContain('no operator URL');
  expect((await sluice('status', '--url')).out).toContain('--url needs a value');
  const unknown = await sluice('backfill', 'start', 'Nope', '--url', url);
  expect(unknown.code).toBe(1);
  expect(unknown.out).toMatch(/^error: POST \/backfills: 400 .*Nope/);
  const missing = await sluice('backfill', 'show', 'nosuchjob', '--url', url);
  expect(missing.out).toContain('404 no backfill nosuchjob');
});

it('forgets a table removed on purpose, and names a table the pipeline does not replicate', async () => {
  const ok = await sluice('tables', 'forget', 'Products', '--targets', 'replica', '--url', url);
  expect(ok.code).toBe(0);
  // The backfill above created the table: its marker is what is forgotten.
  expect(ok.out).toMatch(/^forgot replica products \(was marked\)\nnext: retry the failed partitions/);
  const bad = await sluice('tables', 'forget', 'Prodcts', '--url', url);
  expect(bad.code).toBe(1);
  expect(bad.out).toBe(
    'error: POST /tables/forget: 400 table: "Prodcts" is not a table of the Spanner database (did you mean "Products"?)',
  );
  const usage = await sluice('tables', 'forget', '--url', url);
  expect(usage.code).toBe(2);
  expect(usage.out).toMatch(/^tables forget <table>/);
});

describe('against a recording server', () => {
  let server: Server;
  let base: string;
  const seen: Array<{ method: string; url: string; auth?: string; body: string }> = [];
  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (d) => {
        body += d;
      });
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', auth: req.headers.authorization, body });
        // A replay of all letters answers a continuation once, as the route does past 100 letters.
        const first = req.url === '/dead-letters/replay' && body === '{}';
        const answer = first ? { more: true, next: 'Orders/n1' } : { ok: true };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(() => server.close());

  it('sends the failure-handling requests as the failure-handling routes define them', async () => {
    seen.length = 0;
    await sluice('partitions', 'retry', '--url', base);
    await sluice('partitions', 'retry', '--partition', 'p/1', '--url', base);
    await sluice('dead-letters', 'list', '--page-token', 'abc', '--url', base);
    await sluice('dead-letters', 'list', '--all', '--table', 'Orders', '--url', base);
    await sluice('dead-letters', 'replay', 'd1', 'd2', '--url', base);
    await sluice('dead-letters', 'discard', 'd1', '--reason', 'row fixed', '--url', base);
    await sluice('dead-letters', 'discard', '--table', 'Orders', '--url', base);
    await sluice('tables', 'forget', 'Orders', '--targets', 'replica', '--url', base);
    expect(seen.map(({ method, url: u, body }) => ({ method, url: u, body }))).toEqual([
      { method: 'POST', url: '/partitions/retry', body: '' },
      { method: 'POST', url: '/partitions/retry?partition=p%2F1', body: '' },
      // Pending letters by default (ADR-2202); --all asks for every state.
      { method: 'GET', url: '/dead-letters?pageToken=abc&state=pending', body: '' },
      { method: 'GET', url: '/dead-letters?table=Orders', body: '' },
      { method: 'POST', url: '/dead-letters/replay', body: '{"ids":["d1","d2"]}' },
      { method: 'POST', url: '/dead-letters/discard', body: '{"ids":["d1"],"reason":"row fixed"}' },
      { method: 'POST', url: '/dead-letters/discard', body: '{"table":"Orders"}' },
      { method: 'POST', url: '/tables/forget', body: '{"table":"Orders","targets":["replica"]}' },
    ]);
    expect(seen.every((s) => s.auth === undefined)).toBe(true);
  });

  it("replays every dead letter by following the answer's next", async () => {
    seen.length = 0;
    await sluice('dead-letters', 'replay', '--url', base);
    expect(seen.map(({ url: u, body }) => ({ url: u, body }))).toEqual([
      { url: '/dead-letters/replay', body: '{}' },
      { url: '/dead-letters/replay', body: '{"after":"Orders/n1"}' },
    ]);
  });

  it('sends a given identity token, and asks ADC for one off loopback', async () => {
    seen.length = 0;
    await sluice('status', '--url', base, '--token', 'tok123');
    expect(seen[0]?.auth).toBe('Bearer tok123');
    const env = { GOOGLE_APPLICATION_CREDENTIALS: '/nonexistent/credentials.json' };
    const lines: string[] = [];
    const code = await main(['status', '--url', 'https://sluice-backfill.invalid'], env, {
      out: (l) => lines.push(l),
    });
    expect(code).toBe(1);
    expect(lines.join('\n')).toMatch(
      /no identity token for https:\/\/sluice-backfill\.invalid from Application Default Credentials: .*\(or pass --token\)/,
    );
  });
});

it('runs as `npx sluice`', async () => {
  const { stdout } = await promisify(execFile)('npx', ['sluice', 'status', '--url', url], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  expect(stdout).toMatch(/^pipeline {4}sluice/);
}, 30_000);

/** `sluice …` as a child process, as an operator runs it: exit code and stdout. */
const child = (...argv: string[]) => runSluice(url, argv);

it('prints a summary by default and only JSON with --json: partitions retry, backfill start --wait, backfill show per table', async () => {
  const retry = await child('partitions', 'retry');
  expect(retry).toEqual({ code: 0, out: '0 partition(s) retried; the next tick enqueues them\n' });
  const retryJson = await child('partitions', 'retry', '--json');
  expect(JSON.parse(retryJson.out)).toEqual({ epoch: expect.any(Number), retried: [], skipped: [] });
  const started = await child(...START_PRODUCTS, '--json');
  expect(started.code).toBe(0);
  const job = JSON.parse(started.out) as { id: string; state: string; tables: Array<{ partitions: number }> };
  expect(job).toMatchObject({ state: 'succeeded', rowsWritten: 60 });
  const show = await child('backfill', 'show', job.id);
  expect(show.code).toBe(0);
  const lines = show.out.trimEnd().split('\n');
  expect(lines[0]).toMatch(new RegExp(`^${job.id}  succeeded  Products  partitions`));
  expect(lines[1]).toMatch(/^table +state +partitions +rows read +rows written +not copied$/);
  const n = job.tables[0]!.partitions;
  expect(lines[2]).toMatch(new RegExp(`^Products +done +${n}/${n} +60 +60 +-$`));
  const shown = await child('backfill', 'show', job.id, '--json');
  expect(JSON.parse(shown.out)).toMatchObject({
    id: job.id,
    tables: [{ name: 'Products', rowsWritten: 60 }],
  });
}, 120_000);
