/**
 * The operator console in a real headless browser (Debian's `chromium` through playwright-core) against the
 * local stack: the page loads with nothing from the internet, shows the pipeline's state, the lag chart,
 * partitions, backfills and the replicated tables with their columns, and its cancel button cancels a
 * running backfill. A screenshot is saved under `test-output/console/`.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { launchChromium, requireChromium } from './support/chromium';

const OUTPUT = join(__dirname, '..', '..', 'test-output', 'console');
let stack: LocalStack;
let browser: BrowserContext | undefined;

beforeAll(async () => {
  requireChromium();
  stack = await startLocalStack({ churnMs: 0 });
  await stack.workload(11).prefillProducts(40);
  stack.startTicking(300);
  // A few ticks, so that the status carries lag samples to chart.
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await fetch(`${stack.ready.functions.backfill}/status`);
    const body = res.ok ? ((await res.json()) as { lagHistory?: unknown[] }) : {};
    if ((body.lagHistory?.length ?? 0) >= 3 || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 300));
  }
  browser = await launchChromium({
    viewport: { width: 1400, height: 1000 },
    args: ['--disable-quic', '--disable-component-update', '--disable-sync'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

it('shows the pipeline, and cancels a running backfill from the page', async () => {
  const consoleUrl = stack.ready.console!;
  // Every append fails for now: a backfill started now keeps running until it is cancelled.
  const fault = await fetch(`${stack.ready.bigquery.adminUrl}/faults`, {
    method: 'POST',
    body: JSON.stringify({ method: 'AppendRows', times: 1_000_000, code: 14 }),
  });
  const faultId = ((await fault.json()) as { id: number }).id;
  const started = await fetch(`${stack.ready.functions.backfill}/backfills`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tables: ['Products'], targets: ['replica'] }),
  });
  const job = ((await started.json()) as { id: string }).id;

  const page = await browser!.newPage();
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(consoleUrl);
  await page.waitForSelector('body[data-loaded="true"]', { timeout: 20_000 });

  expect(await page.textContent('[data-testid="state"]')).toMatch(/running|starting/);
  expect(await page.textContent('[data-testid="watermark"]')).toMatch(
    /watermark \d{4}-\d\d-\d\dT[\d:.]+Z · lag [\d.]+ s/,
  );
  expect(Number(await page.getAttribute('[data-testid="lag-chart"]', 'data-samples'))).toBeGreaterThanOrEqual(
    2,
  );
  expect(
    Number(await page.textContent('[data-testid="partition-counts"] td[data-state="total"]')),
  ).toBeGreaterThan(0);
  const customers = page.locator('[data-testid="table"][data-table="Customers"]');
  expect(await customers.textContent()).toContain('customer_id (key)');
  expect(await customers.textContent()).toContain('replica customers');
  expect(await page.locator('[data-testid="table"]').count()).toBe(3);

  const row = page.locator(`tr[data-job="${job}"]`);
  await row.waitFor({ timeout: 10_000 });
  expect(await row.locator('[data-testid="job-state"]').textContent()).toBe('running');
  await row.locator('[data-testid="cancel"]').click();
  await row.locator('[data-testid="job-state"]', { hasText: 'cancelled' }).waitFor({ timeout: 15_000 });
  expect(await page.textContent('[data-testid="notice"]')).toBe(`DELETE /backfills/${job}: done`);
  const view = (await (await fetch(`${stack.ready.functions.backfill}/backfills/${job}`)).json()) as {
    state: string;
  };
  expect(view.state).toBe('cancelled');

  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: join(OUTPUT, 'console.png'), fullPage: true });
  // Nothing but the function itself: no CDN, no font service.
  const origin = new URL(consoleUrl).origin;
  expect(requests.filter((u) => !u.startsWith(origin))).toEqual([]);
  await fetch(`${stack.ready.bigquery.adminUrl}/faults/${faultId}`, { method: 'DELETE' });
}, 90_000);
