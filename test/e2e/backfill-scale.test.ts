/**
 * A backfill of tens of thousands of rows on the local stack (every emulator, the functions as processes):
 * Spanner plans partitions from the data, the queue runs a few at once, BigQuery is slow (so the reads run
 * into the client's back-pressure), and the backfill worker is SIGKILLed mid-job and restarted. The job must
 * finish with the replica equal to Spanner, the history complete, progress reported, and the rows read
 * twice bounded by the partitions that were in flight when the worker died.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { Random } from '../../local/random';
import { LOCAL } from '../../local/stack-config';
import { rowValues } from '../../local/values';
import { useLocalStack } from './support/local-stack';

const ROWS = 20_000;
const CONCURRENCY = 3;

const stack = useLocalStack({
  churnMs: 0,
  backfillConcurrency: CONCURRENCY,
  // About 200 bytes a row: a dozen or more partitions of 256 KiB.
  partitionBytes: 256 * 1024,
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function view(id: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${stack.functions.backfill!.url}/backfills/${id}`);
  return (await res.json()) as Record<string, unknown>;
}

test(`a ${ROWS}-row backfill with a slow BigQuery and a killed worker finishes with replica = Spanner`, async () => {
  const customers = stack.schema.customers;
  const rng = new Random(1414);
  for (let i = 0; i < ROWS; i += 2_000) {
    const rows = Array.from({ length: Math.min(2_000, ROWS - i) }, (_, j) =>
      rowValues(customers, { customer_id: String(i + j + 1) }, rng),
    );
    await stack.database.table(customers.name).insert(rows);
  }
  // Slow appends: the workers wait on BigQuery while Spanner's results keep coming (back-pressure).
  stack.emulators.bigquery.admin.delayAppends(150, 40);
  const posted = await fetch(`${stack.functions.backfill!.url}/backfills`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tables: [customers.name] }),
  });
  expect(posted.status).toBe(202);
  const { id, partitions } = (await posted.json()) as { id: string; partitions: number };
  expect(partitions).toBeGreaterThanOrEqual(CONCURRENCY * 2);

  // Kill the worker once a good part is in BigQuery, while partitions are being read.
  const ingested = () =>
    stack.emulators.bigquery.admin.ingestionHistory(LOCAL.dataset, customers.replica!).length;
  for (let i = 0; i < 600 && ingested() < ROWS * 0.3; i++) await sleep(50);
  await stack.functions.backfill!.kill();
  const killedAt = ingested();
  expect(killedAt).toBeLessThan(ROWS);
  await stack.functions.backfill!.start();

  let last: Record<string, unknown> = {};
  const seen: number[] = [];
  // Bounded only to fail inside the test's time: under load the backfill takes minutes, not seconds.
  for (let i = 0; i < 1_200 && last.state !== 'succeeded' && last.state !== 'failed'; i++) {
    await sleep(250);
    last = await view(id);
    seen.push(Number(last.rowsWritten));
  }
  expect(last).toMatchObject({
    state: 'succeeded',
    partitions: { done: partitions, total: partitions },
    rowsWritten: ROWS,
    tables: [{ name: customers.name, partitions, partitionsDone: partitions, rowsWritten: ROWS }],
    error: null,
  });
  expect(Number(last.rowsPerSecond)).toBeGreaterThan(0);
  // Progress was visible as it went, not only at the end.
  expect(seen.some((n) => n > 0 && n < ROWS)).toBe(true);

  const result = await stack.verify();
  const report = result.replicas.find((r) => r.source === customers.name);
  expect(report).toMatchObject({
    spannerRows: ROWS,
    bigqueryRows: ROWS,
    missing: { count: 0 },
    extra: { count: 0 },
  });
  expect(report?.different.count).toBe(0);
  const history = stack.emulators.bigquery.admin.tableRows(LOCAL.dataset, customers.history!);
  expect(new Set(history.map((r) => String(r.change_id))).size).toBe(ROWS);

  // Only the partitions in flight at the kill were read again: at most CONCURRENCY partitions' rows.
  const reread = ingested() - ROWS;
  expect(reread).toBeGreaterThanOrEqual(0);
  expect(reread).toBeLessThanOrEqual(Math.ceil((CONCURRENCY * ROWS * 1.5) / partitions));
}, 420_000);
