/**
 * What the failure-family tests on the local stack share: the first tick and the ticks after it, the
 * functions' log lines, condition waits, a committer of fresh rows that counts its mods, the operator routes'
 * answers and posts, and the history's row counts.
 */

import type { FunctionLogLine } from '../../../local/function-process';
import { Random } from '../../../local/random';
import type { LocalStack } from '../../../local/stack';
import { LOCAL } from '../../../local/stack-config';
import { rowValues, type WireRow } from '../../../local/values';
import { fromNanos, maxTimestamp } from '../../../shared/domain/timestamp';

/** What `GET /status` answers, as far as these tests read it. */
export interface Status {
  partitions: { failed: number; total: number };
  lastErrors: Array<{ partition?: string; kind: string; message: string; state?: string; failures?: number }>;
  stalled?: Array<{ partition: string; holder: string; leaseExpiredAt: string; secondsPastLease: number }>;
  tables?: Array<{ source: string; state: string; reason?: string }>;
}

/** `GET /status` on the backfill function. */
export async function status(stack: LocalStack): Promise<Status> {
  return (await (await fetch(`${stack.functions.backfill?.url}/status`)).json()) as Status;
}

/** Polls `probe` every 250 ms until it answers something, or fails naming `what` after `ms`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** After a stack's start: its first tick (answered 200), then a tick every 400 ms. */
export async function tickEvery400ms(stack: LocalStack): Promise<void> {
  expect((await stack.tick()).status).toBe(200);
  stack.startTicking(400);
}

/** Keeps the functions' structured log lines in `logs`, for a stack's `onFunctionLog`. */
export function keepLogs(logs: Array<Record<string, unknown>>): (line: FunctionLogLine) => void {
  return (l) => {
    if (l.json) logs.push(l.json);
  };
}

/** Waits up to 60 s for a failed partition; the status that shows it. */
export function failedPartition(stack: LocalStack): Promise<Status> {
  return until(
    'the failed partition',
    async () => {
      const s = await status(stack);
      return s.partitions.failed > 0 ? s : undefined;
    },
    60_000,
  );
}

/** `POST` to an operator route of the backfill function, with `body` as JSON (none when not given). */
export function operatorPost(stack: LocalStack, path: string, body?: unknown): Promise<Response> {
  return fetch(`${stack.functions.backfill!.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

type Table = 'customers' | 'orders';

/**
 * Inserts fresh rows, one transaction per call, into the demo's customers or orders; counts the mods per
 * table (each inserted row is one) and keeps the latest commit timestamp in `state.last`.
 */
export function committer(stack: LocalStack, seed: number) {
  const rng = new Random(seed);
  const state = { last: fromNanos(0n) };
  const counts: Record<Table, number> = { customers: 0, orders: 0 };
  let next = 1;
  const key = (table: Table, id: number): WireRow =>
    table === 'customers' ? { customer_id: String(id) } : { order_id: `o-${seed}-${id}` };
  const insert = async (table: Table, n = 1): Promise<void> => {
    const t = stack.schema[table];
    const rows = Array.from({ length: n }, () => rowValues(t, key(table, next++), rng));
    const at = await stack.database.runTransactionAsync(async (tx) => {
      tx.insert(t.name, rows);
      const [response] = await tx.commit();
      const ts = response.commitTimestamp as { seconds: string | number; nanos: number };
      return fromNanos(BigInt(ts.seconds) * 1_000_000_000n + BigInt(ts.nanos));
    });
    counts[table] += n;
    state.last = maxTimestamp(state.last, at);
  };
  return { insert, state, mods: (table: Table) => counts[table] };
}

/** Rows and distinct change ids of a history table. */
export async function historyCounts(stack: LocalStack, table: string): Promise<{ n: number; d: number }> {
  const [[counts]] = await stack.emulators.bigquery.bigquery().query({
    query: `SELECT COUNT(*) AS n, COUNT(DISTINCT change_id) AS d FROM ${LOCAL.dataset}.${table}`,
  });
  return counts as { n: number; d: number };
}

/** Every mod the committer counted in each of `tables` is in its history table exactly once. */
export async function expectEveryModOnce(
  stack: LocalStack,
  c: ReturnType<typeof committer>,
  tables: Table[] = ['customers', 'orders'],
): Promise<void> {
  for (const t of tables) {
    const mods = c.mods(t);
    expect(await historyCounts(stack, `${t}_history`)).toEqual({ n: mods, d: mods });
  }
}

/** Compares BigQuery with Spanner; prints the differences when they are not equal. */
export async function verdict(stack: LocalStack): Promise<boolean> {
  const v = await stack.verify();
  if (!v.equal) console.error(JSON.stringify(v, null, 2).slice(0, 4000));
  return v.equal;
}
