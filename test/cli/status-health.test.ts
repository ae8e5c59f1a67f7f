/**
 * `npx sluice status` on a pipeline with something wrong, on the local stack: two dead letters (customers
 * without an email, which the hand-made replica requires) and a replica table deleted under the pipeline (its
 * table fails, its partition too). Every one of them shows in the human output, and the exit code says
 * unhealthy.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { main } from '../../cli/main';
import { Random } from '../../local/random';
import type { LocalStack } from '../../local/stack';
import { LOCAL } from '../../local/stack-config';
import { rowValues } from '../../local/values';
import { committer, status, until } from '../e2e/support/failures';
import { startStrictReplicaStack } from '../e2e/support/strict-replica';

let stack: LocalStack;

beforeAll(async () => {
  // The customers replica made by hand with `email` REQUIRED: a customer without one is a dead letter.
  stack = await startStrictReplicaStack();
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

async function sluice(...argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await main(argv, {}, { out: (l) => lines.push(l) });
  return { code, out: lines.join('\n') };
}

async function customersWithoutEmail(ids: number[]): Promise<void> {
  const rng = new Random(3);
  const t = stack.schema.customers;
  const rows = ids.map((id) => ({ ...rowValues(t, { customer_id: String(id) }, rng), email: null }));
  await stack.database.table(t.name).insert(rows);
}

it('shows a failing table, pending dead letters and a failed partition; exits 3', async () => {
  const c = committer(stack, 71);
  await c.insert('orders', 2);
  expect(await stack.waitForCatchUp(c.state.last, 60_000)).toBe(true);
  await customersWithoutEmail([9001, 9002]);
  await until(
    'two dead letters',
    async () =>
      ((await status(stack)) as { deadLetters?: { pending: number } }).deadLetters?.pending === 2 ||
      undefined,
    60_000,
  );
  await stack.emulators.bigquery.bigquery().dataset(LOCAL.dataset).table('orders').delete();
  await c.insert('orders');
  await until(
    'the failing table',
    async () => ((await status(stack)).partitions.failed > 0 ? true : undefined),
    60_000,
  );
  const { code, out } = await sluice('status', '--url', stack.ready.functions.backfill!);
  expect(out).toMatch(
    /^ {2}table {5}Orders → orders, orders_history {2}failing \(6 columns\) — BigQuery table sluice_demo\.orders was not found/m,
  );
  expect(out).toMatch(/^ {2}dead letters {1}2 pending \(2 records\): Customers 2/m);
  expect(out).toMatch(/^unhealthy: /m);
  expect(out).not.toContain('undefined');
  expect(code).toBe(3);
}, 240_000);

it('lists the dead letters as a table, and a replay in which every letter failed exits 1', async () => {
  const url = stack.ready.functions.backfill!;
  const listed = await sluice('dead-letters', 'list', '--url', url);
  expect(listed.code).toBe(0);
  expect(listed.out).toMatch(
    /^id +state +table +key +column +commit timestamp +records +reason +source +updated$/m,
  );
  expect(listed.out).toMatch(
    /^Customers\/\S+ +pending +Customers +\S+ +\S+ +\S+ +1 +permanent:RowsRejectedError /m,
  );
  expect(listed.out).toContain('pending 2 (2 records), replayed 0');
  // The replica still requires an email: both replays fail, and the command says so.
  const replay = await sluice('dead-letters', 'replay', '--url', url);
  expect(replay.out).toMatch(/^failed +Customers\/\S+ +.+/m);
  expect(replay.out).toContain('replayed 0, failed 2');
  expect(replay.code).toBe(1);
  expect((await sluice('--help')).out).toContain('dead-letters list [--table <t>]');
}, 60_000);
