/**
 * End-to-end latency on the local stack (`startLocalStack`, the same stack `npm start` runs): rows are
 * committed through the official client one at a time, at a steady pace, and each is timed from the moment
 * its commit returned until it is visible in the BigQuery emulator's replica table (`admin.tableRows`, polled
 * every 20 ms). The scheduler ticks every 2 s, as `npm start` does.
 *
 * Under load ({@link latencyUnderLoad}) the commits are started at a fixed rate (e.g. 1,000 a second) without
 * waiting for each other, up to a bound of commits in flight, each timed from its own commit's return; the
 * rate the emulator and the client actually reached is reported beside the latencies.
 */

import { Random } from '../../local/random';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { LOCAL } from '../../local/stack-config';
import { rowValues } from '../../local/values';

/** Latencies of one round, in ms. */
export type Round = number[];

async function waitForPipeline(stack: LocalStack, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (stack.progress().watermark !== null) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the pipeline did not start');
}

/** Commits `samples` rows `everyMs` apart and times each until it is visible; unseen after `timeoutMs` → Infinity. */
async function round(
  stack: LocalStack,
  firstId: number,
  samples: number,
  everyMs: number,
  timeoutMs: number,
) {
  const table = stack.schema.customers;
  const replica = table.replica ?? '';
  const rng = new Random(firstId);
  const committed = new Map<string, number>();
  const seen = new Map<string, number>();
  let writing = true;
  const poller = (async () => {
    const deadline = () => Date.now() > lastCommit + timeoutMs;
    while (writing || (seen.size < committed.size && !deadline())) {
      const rows = stack.emulators.bigquery.admin.tableRows(LOCAL.dataset, replica);
      const t = performance.now();
      for (const row of rows) {
        const id = String(row.customer_id);
        if (committed.has(id) && !seen.has(id)) seen.set(id, t);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  let lastCommit = Date.now();
  for (let i = 0; i < samples; i++) {
    const id = String(firstId + i);
    await stack.database.table(table.name).insert(rowValues(table, { customer_id: id }, rng));
    committed.set(id, performance.now());
    lastCommit = Date.now();
    await new Promise((r) => setTimeout(r, everyMs));
  }
  writing = false;
  await poller;
  return [...committed].map(([id, at]) => {
    const visible = seen.get(id);
    return visible === undefined ? Number.POSITIVE_INFINITY : visible - at;
  });
}

/** Latencies (ms) of commits started `perSecond` apart for `seconds`, and the rate reached. */
export interface LoadRound {
  latencies: number[];
  /** Commits per second that returned, over the writing phase. */
  reached: number;
  /** Commits refused or failed (each is retried by nobody: it is not in the latencies). */
  failed: number;
}

async function loadRound(
  stack: LocalStack,
  firstId: number,
  perSecond: number,
  seconds: number,
  timeoutMs: number,
): Promise<LoadRound> {
  const table = stack.schema.customers;
  const replica = table.replica ?? '';
  const rng = new Random(firstId);
  const committed = new Map<string, number>();
  const seen = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();
  const MAX_IN_FLIGHT = 256;
  let failed = 0;
  let writing = true;
  let lastCommit = Date.now();
  const poller = (async () => {
    const deadline = () => Date.now() > lastCommit + timeoutMs;
    while (writing || (seen.size < committed.size && !deadline())) {
      const t = performance.now();
      for (const row of stack.emulators.bigquery.admin.tableRows(LOCAL.dataset, replica)) {
        const id = String(row.customer_id);
        if (committed.has(id) && !seen.has(id)) seen.set(id, t);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const start = performance.now();
  const total = Math.round(perSecond * seconds);
  let started = 0;
  while (started < total) {
    const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * perSecond) + 1);
    while (started < due && inFlight.size < MAX_IN_FLIGHT) {
      const id = String(firstId + started++);
      const p: Promise<void> = stack.database
        .table(table.name)
        .insert(rowValues(table, { customer_id: id }, rng))
        .then(
          () => {
            committed.set(id, performance.now());
            lastCommit = Date.now();
          },
          () => {
            failed++;
          },
        )
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  await Promise.all(inFlight);
  const reached = committed.size / ((performance.now() - start) / 1000);
  writing = false;
  await poller;
  const latencies = [...committed].map(([id, at]) => {
    const visible = seen.get(id);
    return visible === undefined ? Number.POSITIVE_INFINITY : visible - at;
  });
  return { latencies, reached, failed };
}

/** Starts a continuous-mode stack and measures `rounds` rounds of commits at `perSecond` for `seconds` each. */
export async function latencyUnderLoad(o: {
  perSecond: number;
  seconds: number;
  rounds: number;
}): Promise<LoadRound[]> {
  const stack = await startLocalStack({ mode: 'continuous', churnMs: 0 });
  try {
    stack.startTicking(2_000);
    await waitForPipeline(stack, 60_000);
    const rounds: LoadRound[] = [];
    for (let r = 0; r < o.rounds; r++)
      rounds.push(await loadRound(stack, 10_000_000 * (r + 1), o.perSecond, o.seconds, 120_000));
    return rounds;
  } finally {
    await stack.stop();
  }
}

/** Options of {@link endToEndLatency}. */
export interface LatencyOptions {
  mode: 'continuous' | 'scheduled';
  rounds: number;
  samples: number;
  everyMs: number;
}

/** Starts a stack in `mode` and measures `rounds` rounds of latencies. */
export async function endToEndLatency(o: LatencyOptions): Promise<Round[]> {
  const stack = await startLocalStack({ mode: o.mode, churnMs: 0 });
  try {
    stack.startTicking(2_000);
    await waitForPipeline(stack, 60_000);
    const rounds: Round[] = [];
    for (let r = 0; r < o.rounds; r++) {
      rounds.push(await round(stack, 1_000_000 * (r + 1), o.samples, o.everyMs, 60_000));
    }
    return rounds;
  } finally {
    await stack.stop();
  }
}
