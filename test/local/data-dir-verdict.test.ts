/**
 * The verdict of `npm start` run twice on one `--data-dir`, in a real pseudo-terminal: the second run's
 * history tables also hold the first run's rows, which its journal does not. The verdict counts them as
 * restored rows and finds BigQuery equal to Spanner; and whenever it differs it names the failed check.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Terminal } from './support/terminal';

let terminal: Terminal | undefined;
afterEach(() => terminal?.kill());

async function run(args: string): Promise<{ code: number | null; output: string }> {
  terminal = new Terminal(`npm start -- ${args}`);
  const code = await terminal.exited;
  return { code, output: terminal.output };
}

it('counts the rows restored from --data-dir, and the second run is equal too', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-data-'));
  const first = await run(`--data-dir ${dir} --seed 5 --duration 6 --churn-ms 0`);
  expect(first.output).toContain('verdict: BigQuery equals Spanner');
  expect(first.code).toBe(0);
  const second = await run(`--data-dir ${dir} --seed 6 --duration 6 --churn-ms 0`);
  expect(second.output).toContain('continuing on the state restored from --data-dir');
  expect(second.output).toMatch(
    /customers_history: \d+ mods committed; .* [1-9]\d* stream rows restored from before this run/,
  );
  expect(second.output).not.toContain('failed: ');
  expect(second.output).toContain('verdict: BigQuery equals Spanner');
  expect(second.code).toBe(0);
}, 240_000);
