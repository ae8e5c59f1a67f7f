/**
 * The console's dead letters in headless Chromium (ADR-2202, ADR-2203): a stream letter (a customer without
 * an email, which the hand-made replica requires) and a writer letter (an insert of an existing customer,
 * ALREADY_EXISTS) are listed, the writer's marked not replayable; the Discard button beside Replay discards
 * one with the reason typed, and the list and the count follow.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { BrowserContext } from 'playwright-core';
import { Random } from '../../local/random';
import type { LocalStack } from '../../local/stack';
import { rowValues } from '../../local/values';
import { until } from '../e2e/support/failures';
import { startStrictReplicaStack } from '../e2e/support/strict-replica';
import { launchChromium, openConsole, requireChromium } from './support/chromium';

let stack: LocalStack;
let browser: BrowserContext | undefined;

type Listed = { id: string; state: string; source: string; discardedBy?: string; discardReason?: string };
async function letters(): Promise<Listed[]> {
  const res = await fetch(`${stack.ready.functions.backfill}/dead-letters`);
  return ((await res.json()) as { items: Listed[] }).items;
}

beforeAll(async () => {
  requireChromium();
  // The customers replica made by hand with `email` REQUIRED: a customer without one is a dead letter.
  stack = await startStrictReplicaStack();
  const t = stack.schema.customers;
  const row = { ...rowValues(t, { customer_id: '7001' }, new Random(7)), email: null };
  await stack.database.table(t.name).insert([row]);
  const insert = {
    customer_id: '7001',
    name: 'x',
    balance: '1',
    active: true,
    updated_at: '2026-01-01T00:00:00Z',
  };
  const res = await fetch(`${stack.ready.functions.writer}/mutations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mutations: [{ op: 'insert', table: 'Customers', row: insert }] }),
  });
  expect(((await res.json()) as { routed?: number }).routed).toBe(1);
  await until('both letters', async () => ((await letters()).length === 2 ? true : undefined), 90_000);
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

it('lists both letters, the writer one not replayable, and discards one with the reason typed', async () => {
  const page = await openConsole(browser!, stack.ready.console!);
  await page.waitForSelector('[data-testid="dead-letter"][data-source="writer"]', { timeout: 20_000 });
  const writer = page.locator('[data-testid="dead-letter"][data-source="writer"]');
  expect(await writer.textContent()).toMatch(
    /Customers.*\["7001"\].*writer:ALREADY_EXISTS.*writer request \S+.*not replayable/,
  );
  expect(await writer.locator('[data-testid="replay-one"]').count()).toBe(0);
  const stream = page.locator('[data-testid="dead-letter"][data-source="stream"]');
  expect(await stream.locator('[data-testid="replay-one"]').count()).toBe(1);
  const id = await stream.getAttribute('data-id');
  await page.fill('[data-testid="discard-reason"]', 'customer 7001 has an email now');
  await stream.locator('[data-testid="discard"]').click();
  await page
    .locator('[data-testid="notice"]', { hasText: 'discarded 1 (by local)' })
    .waitFor({ timeout: 20_000 });
  await until(
    'the discarded letter gone from the page',
    async () => ((await page.locator('[data-testid="dead-letter"]').count()) === 1 ? true : undefined),
    20_000,
  );
  expect((await letters()).find((l) => l.id === id)).toMatchObject({
    state: 'discarded',
    discardedBy: 'local',
    discardReason: 'customer 7001 has an email now',
  });
}, 120_000);
