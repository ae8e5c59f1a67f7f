/**
 * The operator console in headless Chromium when something fails: a replica table deleted under the
 * pipeline fails its partition and its table. The header badge must not stay a green `running`, and the
 * table's card shows its state and the whole reason.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { BrowserContext } from 'playwright-core';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { LOCAL } from '../../local/stack-config';
import { committer, status, until } from '../e2e/support/failures';
import { launchChromium, openConsole, requireChromium } from './support/chromium';

let stack: LocalStack;
let browser: BrowserContext | undefined;

beforeAll(async () => {
  requireChromium();
  stack = await startLocalStack({ churnMs: 0 });
  expect((await stack.tick()).status).toBe(200);
  stack.startTicking(400);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

it('shows a failed partition in the header badge and a failing table in its card', async () => {
  const c = committer(stack, 81);
  await c.insert('orders', 2);
  expect(await stack.waitForCatchUp(c.state.last, 60_000)).toBe(true);
  await stack.emulators.bigquery.bigquery().dataset(LOCAL.dataset).table('orders').delete();
  await c.insert('orders');
  await until(
    'the failing table',
    async () => {
      const s = (await status(stack)) as unknown as { tables: Array<{ source: string; state: string }> };
      return s.tables.some((t) => t.source === 'Orders' && t.state === 'failing') ? true : undefined;
    },
    60_000,
  );
  const page = await openConsole(browser!, stack.ready.console!);
  const badge = page.locator('[data-testid="state"]');
  expect(await badge.textContent()).toMatch(/^running · 1 failed partition · table Orders failing$/);
  expect(await badge.getAttribute('class')).toContain('unhealthy');
  const orders = page.locator('[data-testid="table"][data-table="Orders"]');
  expect(await orders.locator('[data-testid="table-state"]').textContent()).toBe('failing');
  const reason = await orders.locator('[data-testid="table-reason"]').textContent();
  expect(reason).toMatch(/BigQuery table sluice_demo\.orders was not found: .*POST \/tables\/forget/);
  // The whole reason is on screen: nothing clipped by its card.
  const clipped = await orders
    .locator('[data-testid="table-reason"]')
    .evaluate((el) => el.scrollWidth > el.clientWidth + 1);
  expect(clipped).toBe(false);
}, 120_000);
