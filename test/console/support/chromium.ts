/**
 * Debian's `chromium` through playwright-core, for the console tests: headless, in a fresh profile each run
 * (playwright passes it as --user-data-dir), with nothing fetched from the internet behind the page's back.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

/** Fails at once, naming the package, when the browser is not installed. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
}

/** A headless browser in a fresh profile; `args` go after the flags every console test passes. */
export function launchChromium(
  options: { viewport?: { width: number; height: number }; args?: string[] } = {},
): Promise<BrowserContext> {
  return chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'sluice-chromium-')), {
    executablePath: CHROMIUM,
    headless: true,
    ...(options.viewport ? { viewport: options.viewport } : {}),
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      ...(options.args ?? []),
    ],
  });
}

/** A new page on the console at `url`, once the page has loaded the pipeline's state. */
export async function openConsole(browser: BrowserContext, url: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(url);
  await page.waitForSelector('body[data-loaded="true"]', { timeout: 20_000 });
  return page;
}
