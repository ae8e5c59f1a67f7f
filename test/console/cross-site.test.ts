/**
 * Cross-site request forgery in a real headless browser (ADR-2301): a page of another origin posts a form
 * to the backfill function's `POST /backfills` (as it could through `gcloud run services proxy`, which adds
 * the operator's identity to every request) and starts nothing; the console itself, served with its nonce
 * policy, still runs its script and its buttons. The function is served by the functions framework's own
 * server (its body parsers included) over an in-memory pipeline.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { existsSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { type BrowserContext, chromium } from 'playwright-core';
import { handleBackfillRequest } from '../../functions/backfill/routes';
import { type ExpressApp, installOn } from '../../shared/http/edge';
import { harness, seedOrders } from '../app/backfill/support';

const CHROMIUM = '/usr/bin/chromium';
const h = harness();
let browser: BrowserContext;
let target: ReturnType<typeof getTestServer>;
let attacker: Server;
let targetUrl = '';
let attackerUrl = '';

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  seedOrders(h, 4);
  http('backfill-cross-site', async (req, res) => {
    await handleBackfillRequest(h.deps, req as never, res as never);
  });
  target = getTestServer('backfill-cross-site');
  installOn(target.listeners('request')[0] as unknown as ExpressApp);
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  // The other site: a page whose form posts itself to the function as soon as it loads.
  attacker = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(`<form id="f" method="POST" action="${targetUrl}/backfills">
      <input name="tables[0]" value="Orders"></form><script>document.getElementById('f').submit()</script>`);
  });
  await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', () => r()));
  // Another origin: the loopback name rather than its address.
  attackerUrl = `http://localhost:${(attacker.address() as AddressInfo).port}`;
  browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'sluice-chromium-')), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => target?.close(r));
  await new Promise((r) => attacker?.close(r));
});

it('a form posted from another origin starts no backfill', async () => {
  const page = await browser.newPage();
  const answered = page.waitForResponse((r) => r.url() === `${targetUrl}/backfills`);
  await page.goto(attackerUrl);
  expect((await answered).status()).toBe(415);
  expect(h.queue.pending).toHaveLength(0);
  const listed = (await (await fetch(`${targetUrl}/backfills`)).json()) as { backfills: unknown[] };
  expect(listed.backfills).toEqual([]);
  await page.close();
});

it('the console runs its script under the nonce policy, and its buttons send their requests', async () => {
  const page = await browser.newPage();
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/.test(m.text())) violations.push(m.text());
  });
  await page.goto(`${targetUrl}/`);
  await page.waitForSelector('body[data-loaded="true"]', { timeout: 20_000 });
  // A backfill started the way the console's own fetch does it is listed, and cancelled by its button.
  const started = await page.evaluate(async () => {
    const res = await fetch('/backfills', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tables: ['Orders'] }),
    });
    return res.status;
  });
  expect(started).toBe(202);
  await page.waitForSelector('[data-testid="cancel"]', { timeout: 10_000 });
  await page.click('[data-testid="cancel"]');
  await page.waitForSelector('[data-testid="notice"]:text-matches("DELETE /backfills/.+: done")', {
    timeout: 10_000,
  });
  expect(violations).toEqual([]);
  await page.close();
});
