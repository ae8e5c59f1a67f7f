/**
 * `npm start` as a user runs it, in a real pseudo-terminal: Ctrl-C waits for catch-up and exits 0 with
 * BigQuery equal to Spanner; a pipeline that cannot catch up exits 1 and shows why; a second Ctrl-C quits
 * at once; and in every case no function process is left behind. Faults are injected through the admin
 * URL the ready line names, as a user's own script would.
 */
import { existsSync, readFileSync } from 'node:fs';
import { functionProcesses, Terminal } from './support/terminal';

interface Ready {
  spanner: { dialect: string; adminUrl: string };
  bigquery: { adminUrl: string };
  lineage: { endpoint: string; adminUrl: string };
  functions: Record<string, string | null>;
  logFile: string;
}

const READY = /sluice local ready (\{.*\})\n/;
let terminal: Terminal | undefined;

afterEach(() => terminal?.kill());

async function started(args: string): Promise<{ term: Terminal; ready: Ready }> {
  const term = new Terminal(`npm start -- ${args}`);
  terminal = term;
  const m = await term.waitFor(READY, 90_000);
  const ready = JSON.parse(m[1]!) as Ready;
  expect(functionProcesses(ready.functions)).toHaveLength(
    Object.values(ready.functions).filter(Boolean).length,
  );
  return { term, ready };
}

/** Every append to BigQuery fails from now on: nothing more reaches the sinks, the watermark stops. */
async function blockBigQuery(ready: Ready): Promise<void> {
  const res = await fetch(`${ready.bigquery.adminUrl}/faults`, {
    method: 'POST',
    body: JSON.stringify({ method: 'AppendRows', times: 1_000_000, code: 14, message: 'injected outage' }),
  });
  expect(res.status).toBe(200);
}

it('Ctrl-C waits for catch-up, finds BigQuery equal to Spanner and exits 0', async () => {
  const { term, ready } = await started('--dialect postgresql --seed 42 --lineage');
  expect(ready.spanner.dialect).toBe('POSTGRESQL');
  expect(ready.lineage.endpoint).toMatch(/^127\.0\.0\.1:\d+$/);
  // The pipeline's START reached the local Data Lineage API; with --lineage its column edges follow the
  // summary line, one per line.
  const summary = await term.waitFor(
    /lineage: ([1-9]\d*) column edges from \d+ run events? — listed below/,
    60_000,
  );
  await term.waitFor(
    / {2}spanner:\/\/sluice-local:local:demo\.\w+\.\w+ → bigquery:sluice-local\.sluice_demo\.\w+\.\w+/,
    10_000,
  );
  // The summary's count is the emulator's, as its admin endpoint serves it.
  const edges = (await (await fetch(`${ready.lineage.adminUrl}/edges`)).json()) as unknown[];
  expect(edges).toHaveLength(Number(summary[1]));
  await term.waitFor(/txns [1-9]\d\d /, 60_000);
  term.interrupt();
  await term.waitFor(/stopping: catch-up/, 10_000);
  expect(await term.exited).toBe(0);
  expect(term.output).toMatch(/catching up to \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z/);
  expect(term.output).toContain('verdict: BigQuery equals Spanner');
  expect(term.output).not.toContain('quit at once, without');
  expect(functionProcesses(ready.functions)).toEqual([]);
  // The functions' log lines are in the file the ready line names.
  expect(existsSync(ready.logFile)).toBe(true);
  expect(readFileSync(ready.logFile, 'utf8')).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z reader \{/m);
}, 180_000);

it('exits 1 when the pipeline cannot catch up, showing the latest error', async () => {
  const { term, ready } = await started('--seed 7 --catch-up-timeout 5');
  // Without --lineage one summary line says where the edges are, and no edge is printed.
  await term.waitFor(
    /lineage: [1-9]\d* column edges from \d+ run events? — npm start -- --lineage lists them, or GET http:\/\/127\.0\.0\.1:\d+\/edges/,
    60_000,
  );
  await term.waitFor(/txns [1-9]\d /, 60_000);
  expect(term.output).not.toMatch(/ → bigquery:/);
  await blockBigQuery(ready);
  await term.waitFor(/last error {5}reader: /, 60_000);
  term.interrupt();
  expect(await term.exited).toBe(1);
  expect(term.output).toContain('not caught up after 5s');
  expect(term.output).toContain('verdict: BigQuery DIFFERS from Spanner');
  expect(term.output).toMatch(/last error {5}reader: [a-z.-]+: .*injected outage/);
  expect(functionProcesses(ready.functions)).toEqual([]);
}, 180_000);

it('a second Ctrl-C quits at once, with nothing left running', async () => {
  const { term, ready } = await started('--seed 9 --catch-up-timeout 600');
  await term.waitFor(/txns [1-9]\d /, 60_000);
  await blockBigQuery(ready);
  term.interrupt();
  await term.waitFor(/stopping: catch-up/, 10_000);
  await new Promise((r) => setTimeout(r, 1_000));
  term.interrupt();
  expect(await term.exited).toBe(130);
  expect(term.output).toContain('quit at once, without verification');
  expect(term.output).not.toContain('verdict:');
  expect(functionProcesses(ready.functions)).toEqual([]);
}, 180_000);
