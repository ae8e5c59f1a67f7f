/**
 * `npm start` with writer traffic, in a real pseudo-terminal: rows written through the writer function during
 * a workload run are changes the workload's journal does not hold. The verdict counts the writer's applied
 * mutations as expected mods, so it is EQUAL when BigQuery holds exactly the workload's and the writer's
 * changes (it said DIFFERS, stream rows above the journal's mods, before).
 */
import { Terminal } from './support/terminal';

const READY = /sluice local ready (\{.*\})\n/;
let terminal: Terminal | undefined;
afterEach(() => terminal?.kill());

async function write(url: string, mutations: unknown[]): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${url}/mutations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mutations }),
  });
  return { status: res.status, body: await res.json() };
}

it('counts the writer mutations applied during a workload run, and finds BigQuery equal', async () => {
  terminal = new Terminal('npm start -- --seed 12 --duration 15 --churn-ms 0');
  const ready = JSON.parse((await terminal.waitFor(READY, 90_000))[1]!) as {
    functions: { writer: string };
  };
  const placed = new Date().toISOString();
  const order = (id: string) => ({
    order_id: id,
    customer_id: '1',
    amount: '9.50',
    quantity: 2,
    placed_at: placed,
    status: 'NEW',
  });
  // Three applied mutations of Orders (three mods) and one that fails (no mod): an update of a missing row.
  const first = await write(ready.functions.writer, [
    { op: 'insert', table: 'Orders', row: order('through-the-writer-1') },
    { op: 'insertOrUpdate', table: 'Orders', row: order('through-the-writer-2') },
  ]);
  expect(first.status).toBe(200);
  const second = await write(ready.functions.writer, [
    { op: 'update', table: 'Orders', row: { order_id: 'through-the-writer-1', status: 'PAID' } },
    { op: 'update', table: 'Orders', row: { order_id: 'never-written', status: 'PAID' } },
  ]);
  expect(second.status).toBe(422);
  expect(await terminal.exited).toBe(0);
  expect(terminal.output).toMatch(/Orders → orders_history: \d+ mods committed, 3 through the writer;/);
  expect(terminal.output).not.toContain('failed: ');
  expect(terminal.output).toContain('verdict: BigQuery equals Spanner');
}, 240_000);
