/**
 * One fault run on a fresh local stack: the first tick starts the pipeline, the scheduler ticks, a seeded
 * workload commits transactions while a fault plan strikes between them, then every fault is lifted and the
 * pipeline must catch up to the last commit with replica = Spanner and every committed mod in history exactly
 * once.
 * A failing run prints its seed, how to replay it, and what the ledger and the reader queue looked like.
 */
import { relative } from 'node:path';
import { Random } from '../../../local/random';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../../local/stack';
import { queueName } from '../../../local/stack-config';
import type { Workload } from '../../../local/workload';
import type { Dialect } from '../../../shared/domain/change-record';
import { TEST_STACK } from './local-stack';
import { replayLine, runSeed } from './seed';

/** What a fault plan sees. */
export interface FaultContext {
  stack: LocalStack;
  /** The plan's own generator (derived from the run's seed, independent of the workload's). */
  rng: Random;
  workload: Workload;
  /** What was injected, in order (printed when the run fails). */
  log: string[];
}

/** When and what to break; every hook is optional. */
export interface FaultPlan {
  /** Before the first tick (e.g. pre-fill a table only a backfill brings over). */
  prepare?(ctx: FaultContext): Promise<void>;
  /** Before workload step `step` (0-based). */
  beforeStep?(ctx: FaultContext, step: number): Promise<void>;
  /** After the workload, once faults are lifted, before waiting for catch-up. */
  afterWorkload?(ctx: FaultContext): Promise<void>;
  /** Once the pipeline caught up, before the verdict (e.g. to read the status). */
  afterCatchUp?(ctx: FaultContext): Promise<void>;
}

/** A run: its name (also the jest test name, for the replay line), dialect, size and fault plan. */
export interface Scenario {
  name: string;
  /** The test file, for the replay line (pass `__filename`). */
  file: string;
  dialect?: Dialect;
  /** Workload transactions (default 40). */
  steps?: number;
  /** Longest wait for catch-up once the workload stopped (default 20 s). */
  catchUpMs?: number;
  stack?: LocalStackOptions;
  plan: FaultPlan;
  /**
   * The run fails (printing its seed) when catch-up and verification take longer than this after the
   * workload ended, before jest's own timeout hides it (default 45 s).
   */
  boundMs?: number;
}

/** Injector rule counts of every emulator: how often injected faults actually struck. */
export interface FiredFaults {
  spanner: number;
  gcs: number;
  tasks: number;
  bigquery: number;
}

/** What a finished run reports (for assertions that the faults really happened). */
export interface RunReport {
  seed: number;
  fired: FiredFaults;
  log: string[];
  stack: LocalStack;
  /** How often each structured log message of the functions was written (e.g. `history.rows-already-written`). */
  events: Map<string, number>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const bigintSafe = (_k: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);

/** Counts fired rules of every injector, then removes every rule: the pipeline must recover from here. */
export function liftFaults(stack: LocalStack): FiredFaults {
  const e = stack.emulators;
  const sum = (rules: Array<{ fired: number }>) => rules.reduce((n, r) => n + r.fired, 0);
  const fired = {
    spanner: sum(e.spanner.admin.faults.list()),
    gcs: sum(e.gcs.admin.faults()),
    tasks: sum(e.tasks.admin.faults()),
    bigquery: sum(e.bigquery.admin.faults.list()),
  };
  e.spanner.admin.faults.clear();
  e.gcs.admin.clearFaults();
  e.tasks.admin.clearFaults();
  e.bigquery.admin.clearFaults();
  return fired;
}

function diagnostics(ctx: FaultContext): string {
  const { stack } = ctx;
  const tasks = stack.emulators.tasks.admin
    .tasks(queueName('reader'))
    .slice(-8)
    .map((t) => ({
      name: t.name.split('/').pop(),
      outcome: t.outcome,
      at: t.scheduleTimeMs,
      n: t.dispatchCount,
    }));
  return JSON.stringify(
    {
      lastCommit: ctx.workload.lastCommit,
      progress: stack.progress(),
      workload: ctx.workload.stats,
      tickFailures: stack.tickFailures,
      faults: ctx.log.slice(-30),
      recentReaderTasks: tasks,
      recentErrors: stack.errors.slice(-5).map((l) => `${l.function}: ${l.text.slice(0, 300)}`),
    },
    bigintSafe,
    1,
  );
}

/** How long the workload may take on a slow machine before the run counts as hung. */
const WORKLOAD_LIMIT_MS = 90_000;

/**
 * `work`, or an error once it hangs: the workload gets {@link WORKLOAD_LIMIT_MS}, and from its end
 * (`work` calls `workloadDone`) the rest gets `ms`. The bound measures the pipeline, not how fast a shared
 * machine commits the workload (the abandoned work ends when the stack stops).
 */
async function bounded<T>(
  work: (workloadDone: () => void) => Promise<T>,
  ms: number,
  ctx: FaultContext,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let fail: (err: Error) => void = () => {};
  const deadline = new Promise<never>((_, reject) => {
    fail = reject;
  });
  const arm = (limit: number, message: string) => {
    clearTimeout(timer);
    timer = setTimeout(() => fail(new Error(message)), limit);
  };
  arm(WORKLOAD_LIMIT_MS, `the workload took longer than ${WORKLOAD_LIMIT_MS} ms`);
  const running = work(() => arm(ms, `the run took longer than ${ms} ms after the workload`));
  running.catch((err: unknown) => ctx.log.push(`after the deadline: ${String(err)}`));
  try {
    return await Promise.race([running, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function drive(ctx: FaultContext, s: Scenario, workloadDone: () => void): Promise<FiredFaults> {
  const { stack, workload, plan } = { ...ctx, plan: s.plan };
  await plan.prepare?.(ctx);
  const t0 = Date.now();
  const mark = (what: string) => ctx.log.push(`+${Date.now() - t0} ms ${what}`);
  const first = await stack.tick();
  if (first.status !== 200) throw new Error(`first tick answered ${first.status}`);
  stack.startTicking(500);
  for (let step = 0; step < (s.steps ?? 40); step++) {
    await plan.beforeStep?.(ctx, step);
    await workload.step();
    await sleep(ctx.rng.int(10, 120));
  }
  mark('workload done');
  workloadDone();
  const fired = liftFaults(stack);
  await plan.afterWorkload?.(ctx);
  mark('faults lifted, waiting for catch-up');
  if (workload.lastCommit === null) throw new Error('the workload committed nothing');
  const caughtUp = await stack.waitForCatchUp(workload.lastCommit, s.catchUpMs ?? 20_000);
  if (caughtUp) await plan.afterCatchUp?.(ctx);
  await stack.stopTicking();
  if (!caughtUp) throw new Error('the pipeline did not catch up with the last commit');
  return fired;
}

/**
 * Runs `s` and checks the outcome: caught up, no partition failed, replicas equal Spanner and no committed
 * mod missing from history. Throws (after printing the seed and diagnostics) when any of it does not hold.
 */
export async function runScenario(s: Scenario): Promise<RunReport> {
  const seed = runSeed();
  const events = new Map<string, number>();
  const stack = await startLocalStack({
    ...TEST_STACK,
    dialect: s.dialect,
    churnMs: 1_500,
    ...s.stack,
    onFunctionLog: (line) => {
      const message = line.json?.message;
      if (typeof message === 'string') events.set(message, (events.get(message) ?? 0) + 1);
      s.stack?.onFunctionLog?.(line);
    },
  });
  const ctx: FaultContext = {
    stack,
    rng: new Random(seed ^ 0x5bd1e995),
    workload: stack.workload(seed),
    log: [],
  };
  try {
    const fired = await bounded((done) => drive(ctx, s, done), s.boundMs ?? 45_000, ctx);
    const progress = stack.progress();
    if (progress.partitions.failed > 0) throw new Error(`failed partitions: ${progress.errors.join('; ')}`);
    // The workload wrote every change the stream carried: each raw history table must hold exactly its
    // mods — COUNT(*) = COUNT(DISTINCT change_id) = mods committed — besides replica = Spanner.
    const verdict = await stack.verify(ctx.workload.journal, { journalComplete: true });
    if (!verdict.equal)
      throw new Error(`BigQuery differs from Spanner: ${JSON.stringify(verdict).slice(0, 3000)}`);
    return { seed, fired, log: ctx.log, stack, events };
  } catch (err) {
    console.error(`${replayLine(s.name, seed, relative(process.cwd(), s.file))}\n${diagnostics(ctx)}`);
    throw err;
  } finally {
    await stack.stop();
  }
}
