/**
 * The documented `--no-workload` use (docs/local.md, "Pointing your own code at the emulators"): read the
 * ready line, then write with your own code. A change committed right after the ready line must reach both
 * the replica and the history table — the ready line comes only once the pipeline replicates.
 */
import { BigQuery } from '@google-cloud/bigquery';
import { Spanner } from '@google-cloud/spanner';
import { Terminal } from './support/terminal';

process.env.METADATA_SERVER_DETECTION = 'none';

const READY = /sluice local ready (\{.*\})\n/;
let terminal: Terminal | undefined;

afterEach(() => terminal?.kill());

/** INSERT rows of the orders history table (0 while the pipeline has not created it yet). */
async function historyInserts(bigquery: BigQuery): Promise<number> {
  try {
    const [result] = await bigquery.query(
      "SELECT COUNT(*) AS n FROM `sluice-local.sluice_demo.orders_history` WHERE mod_type = 'INSERT'",
    );
    return Number((result[0] as { n: unknown } | undefined)?.n ?? 0);
  } catch (err) {
    if ((err as { code?: number }).code === 404) return 0;
    throw err;
  }
}

it('replicates a write committed right after the ready line, to the replica and the history', async () => {
  const term = new Terminal('npm start -- --no-workload --catch-up-timeout 60');
  terminal = term;
  const ready = JSON.parse((await term.waitFor(READY, 90_000))[1]!) as {
    spanner: { emulatorHost: string };
    bigquery: { restEndpoint: string };
  };
  process.env.SPANNER_EMULATOR_HOST = ready.spanner.emulatorHost;
  const spanner = new Spanner({ projectId: 'sluice-local' });
  try {
    const database = spanner.instance('local').database('demo');
    await database.table('Orders').insert([
      {
        order_id: 'right-after-ready',
        customer_id: '1',
        amount: Spanner.numeric('12.50'),
        quantity: '3',
        placed_at: new Date().toISOString(),
        status: 'NEW',
      },
    ]);
    await database.close();
  } finally {
    spanner.close();
    delete process.env.SPANNER_EMULATOR_HOST;
  }
  // The history table receives the insert once the pipeline's window passes it (a change committed before
  // the pipeline's start never would).
  const bigquery = new BigQuery({ projectId: 'sluice-local', apiEndpoint: ready.bigquery.restEndpoint });
  const deadline = Date.now() + 60_000;
  let rows = 0;
  while (rows === 0 && Date.now() < deadline) {
    rows = await historyInserts(bigquery);
    if (rows === 0) await new Promise((r) => setTimeout(r, 1_000));
  }
  expect(rows).toBe(1);
  term.interrupt();
  expect(await term.exited).toBe(0);
  expect(term.output).toContain('verdict: BigQuery equals Spanner');
}, 180_000);
