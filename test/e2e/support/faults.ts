/**
 * The fault families, each a {@link FaultPlan} that strikes at seeded points of the workload through the
 * emulators' admin handles or by killing function processes. Every injected rule is bounded (`times`), and
 * the run lifts whatever is left before it waits for catch-up.
 */
import { databaseName, queueName } from '../../../local/stack-config';
import type { FaultContext, FaultPlan } from './scenario';

const UNAVAILABLE = 14;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Re-enqueues a copy of a queued reader task under a new name: a duplicated delivery, possibly concurrent. */
async function duplicateQueuedTask(ctx: FaultContext): Promise<void> {
  const client = ctx.stack.emulators.tasks.client();
  try {
    const parent = queueName('reader');
    const [tasks] = await client.listTasks({ parent, responseView: 'FULL' });
    const original = tasks.length > 0 ? ctx.rng.pick(tasks) : undefined;
    if (!original?.httpRequest) return;
    await client.createTask({ parent, task: { httpRequest: original.httpRequest } });
    ctx.log.push(`duplicated ${String(original.name).split('/').pop()}`);
  } finally {
    await client.close();
  }
}

/** Duplicated tasks, and attempts delayed or failed before they reach the reader. */
export function taskFaults(): FaultPlan {
  return {
    async beforeStep(ctx, step) {
      const admin = ctx.stack.emulators.tasks.admin;
      if (step === 2) {
        admin.fail({ method: 'dispatch', times: ctx.rng.int(3, 6), delayMs: ctx.rng.int(300, 1_500) });
        admin.fail({ method: 'dispatch', times: 2, code: 503 });
        ctx.log.push('dispatch: delays, then two 503s');
      }
      if (ctx.rng.chance(0.4)) await duplicateQueuedTask(ctx);
    },
  };
}

/** SIGKILLs the reader at seeded points (mid-window, mid-flush, mid-checkpoint: wherever it is) and restarts it. */
export function readerKills(kills = 2): FaultPlan {
  const at = new Set<number>();
  return {
    async beforeStep(ctx, step) {
      if (step === 0) while (at.size < kills) at.add(ctx.rng.int(3, 22));
      if (!at.has(step)) return;
      const reader = ctx.stack.functions.reader!;
      await sleep(ctx.rng.int(0, 400));
      await reader.kill('SIGKILL');
      ctx.log.push(`reader killed before step ${step}`);
      await sleep(ctx.rng.int(0, 300));
      await reader.start();
    },
  };
}

/** Bursts of scheduler ticks racing each other and the regular ticker, with extra partition churn. */
export function concurrentTicks(): FaultPlan {
  return {
    async beforeStep(ctx) {
      if (ctx.rng.chance(0.3)) {
        const n = ctx.rng.int(2, 5);
        const answers = await Promise.all(Array.from({ length: n }, () => ctx.stack.tick()));
        ctx.log.push(`ticks x${n}: ${answers.map((a) => a.status).join(',')}`);
      }
      if (ctx.rng.chance(0.1)) {
        ctx.stack.emulators.changeStreams(databaseName()).churnNow();
        ctx.log.push('churn');
      }
    },
  };
}

/** Ledger writes and reads answered 412 (after the write took effect), 429 and 503. */
export function storageFaults(): FaultPlan {
  return {
    async beforeStep(ctx) {
      if (!ctx.rng.chance(0.3)) return;
      const gcs = ctx.stack.emulators.gcs.admin;
      const kind = ctx.rng.pick(['412-after-write', '429', '503', 'read-503', 'list-503'] as const);
      if (kind === '412-after-write')
        gcs.fail({ method: 'objects.insert', times: 1, code: 412, afterItems: 1 });
      else if (kind === '429' || kind === '503')
        gcs.fail({ method: 'objects.insert', times: ctx.rng.int(1, 2), code: Number(kind) });
      else if (kind === 'read-503') gcs.fail({ method: 'objects.download', times: 1, code: 503 });
      else gcs.fail({ method: 'objects.list', times: 1, code: 503 });
      ctx.log.push(`gcs ${kind}`);
    },
  };
}

/** Change-stream queries ended with UNAVAILABLE after a few records. */
export function spannerFaults(): FaultPlan {
  return {
    async beforeStep(ctx, step) {
      // One strike through the gRPC fault rules for sure (so the run can count it), the rest at random.
      if (step !== 1 && !ctx.rng.chance(0.25)) return;
      const k = ctx.rng.int(0, 4);
      if (step !== 1 && ctx.rng.chance(0.5))
        ctx.stack.emulators.changeStreams(databaseName()).endQueryAfter(k, UNAVAILABLE);
      else
        ctx.stack.emulators.spanner.admin.faults.add({
          method: 'ExecuteStreamingSql',
          times: 1,
          code: UNAVAILABLE,
          afterItems: k,
        });
      ctx.log.push(`spanner UNAVAILABLE after ${k} rows`);
    },
  };
}

/** Storage Write appends failing in-band, connections ended mid-stream, and connections dropped. */
export function bigqueryFaults(): FaultPlan {
  return {
    async beforeStep(ctx) {
      if (!ctx.rng.chance(0.25)) return;
      const bq = ctx.stack.emulators.bigquery.admin;
      const kind = ctx.rng.pick(['append-error', 'end-stream', 'drop'] as const);
      if (kind === 'append-error') bq.failNextAppends(ctx.rng.int(1, 3), UNAVAILABLE);
      else if (kind === 'end-stream') bq.endAppendStreamAfter(ctx.rng.int(0, 3), UNAVAILABLE);
      else bq.faults.add({ method: 'AppendRows', times: 1, drop: true });
      ctx.log.push(`bigquery ${kind}`);
    },
  };
}

/** History rows in every history table of the demo (what BigQuery has acknowledged). */
function historyRows(ctx: FaultContext): number {
  const bq = ctx.stack.emulators.bigquery.admin;
  return ctx.stack.schema.tables
    .flatMap((t) => (t.history ? [t.history] : []))
    .reduce((n, table) => n + bq.tableRows('sluice_demo', table).length, 0);
}

async function until(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await sleep(25);
  }
  return condition();
}

/**
 * The reader dies after BigQuery acknowledged history rows and before the ledger recorded them: an append is
 * held back a moment, ledger writes start to fail (connections dropped) once it is, and as soon as the rows
 * are in the reader is killed.
 * Its successor re-reads the window and meets its rows as already written. Strikes at up to three seeded
 * steps (a strike needs a reader to be mid-window at that moment).
 */
export function killAfterAck(): FaultPlan {
  const at = new Set<number>();
  return {
    async beforeStep(ctx, step) {
      if (step === 0) while (at.size < 3) at.add(ctx.rng.int(6, 24));
      if (!at.has(step) || ctx.log.some((l) => l.startsWith('killed after BigQuery acknowledged'))) return;
      const { bigquery, gcs } = ctx.stack.emulators;
      const before = historyRows(ctx);
      // Only a history append is held: its reader is mid-window, with its lease and its stream recorded.
      const held = bigquery.admin.faults.add({
        method: 'AppendRows',
        times: 1,
        delayMs: 1_500,
        target: '_history/streams/',
      });
      await ctx.workload.step();
      const fired = () => (bigquery.admin.faults.list().find((r) => r.id === held)?.fired ?? 0) > 0;
      if (!(await until(fired, 8_000))) {
        bigquery.admin.faults.clear(held);
        ctx.log.push(`no append to hold back before step ${step}`);
        return;
      }
      const drop = gcs.admin.fail({ method: 'objects.insert', times: 10_000, drop: true });
      const acked = await until(() => historyRows(ctx) > before, 6_000);
      const reader = ctx.stack.functions.reader!;
      if (acked) await reader.kill('SIGKILL');
      gcs.admin.clearFaults(drop);
      bigquery.admin.faults.clear(held);
      if (!acked) {
        ctx.log.push(`no acknowledgement seen before step ${step}`);
        return;
      }
      ctx.log.push(`killed after BigQuery acknowledged, before the ledger moved (step ${step})`);
      await reader.start();
    },
  };
}

/**
 * A reader stalls in BigQuery past its lease: one history append (its reader provably mid-window, holding the
 * lease) is held back 25 s, well past the 10 s lease, so the scheduler's takeover (ticks every 500 ms) has
 * time to reach another attempt even on a loaded machine; the first one carries on with its old cursor
 * afterwards and its next ledger write is refused.
 */
export function slowReader(): FaultPlan {
  let step0 = -1;
  return {
    async beforeStep(ctx, step) {
      if (step === 0) step0 = ctx.rng.int(6, 20);
      if (step !== step0) return;
      ctx.stack.emulators.bigquery.admin.faults.add({
        method: 'AppendRows',
        times: 1,
        delayMs: 25_000,
        target: '_history/streams/',
      });
      ctx.log.push(`slow reader: one history append held 25 s (lease 10 s) before step ${step}`);
    },
  };
}

/** Every plan's hooks, in order. */
export function combine(...plans: FaultPlan[]): FaultPlan {
  return {
    async prepare(ctx) {
      for (const p of plans) await p.prepare?.(ctx);
    },
    async beforeStep(ctx, step) {
      for (const p of plans) await p.beforeStep?.(ctx, step);
    },
    async afterWorkload(ctx) {
      for (const p of plans) await p.afterWorkload?.(ctx);
    },
  };
}

/**
 * Every family at once: before each step one family, picked by the seed, strikes; the reader dies once at a
 * random point and once right after BigQuery acknowledged, and one reader stalls past its lease.
 */
export function mixedFaults(): FaultPlan {
  const families = [taskFaults(), concurrentTicks(), storageFaults(), spannerFaults(), bigqueryFaults()];
  const always = [readerKills(1), killAfterAck(), slowReader()];
  return {
    async beforeStep(ctx, step) {
      for (const plan of always) await plan.beforeStep?.(ctx, step);
      await ctx.rng.pick(families).beforeStep?.(ctx, step);
    },
  };
}
