/**
 * One `npm start` run on a started stack: workload, scheduler ticks and the live view until the duration
 * ends or the user interrupts; then stop the workload, wait for catch-up, verify and report. Returns the
 * process exit code (0 only when BigQuery equals Spanner).
 */
import { formatTimestamp, fromNanos } from '../shared/domain/timestamp';
import type { StartOptions } from './cli-options';
import { printLineage } from './lineage-view';
import { type Screen, statusFrame, statusLine, type ViewState } from './live-view';
import { describeLogLine } from './log-lines';
import { freshSeed } from './random';
import type { LocalStack } from './stack';
import { LOCAL } from './stack-config';
import { formatVerdict } from './verifier';
import type { Workload } from './workload';

/** Where the run writes (the CLI passes the terminal; tests pass collectors). */
export interface RunIO {
  screen: Screen;
  /** Resolves when the user asks to stop (Ctrl-C). */
  interrupted: Promise<void>;
  /**
   * Called once the pipeline runs (the scheduler wrote the ledger): from then on every change committed
   * is replicated, so this is when `npm start` prints its ready line.
   */
  running?: () => void;
}

function viewState(stack: LocalStack, workload: Workload | null): ViewState {
  const rows = stack.schema.tables.flatMap((t): Array<{ table: string; rows: number | null }> => {
    if (!t.replica) return [];
    try {
      return [
        { table: t.replica, rows: stack.emulators.bigquery.admin.tableRows(LOCAL.dataset, t.replica).length },
      ];
    } catch {
      return [{ table: t.replica, rows: null }];
    }
  });
  return {
    now: fromNanos(stack.emulators.spanner.admin.nowNs()),
    progress: stack.progress(),
    finishedSinceStart: stack.finishedSinceStart(),
    rows,
    workload: workload?.stats ?? null,
    functionErrors: stack.errors.length,
    lastError: lastError(stack) ?? workload?.stats.lastError ?? null,
  };
}

function lastError(stack: LocalStack): string | null {
  const line = stack.errors.at(-1);
  return line ? describeLogLine(line) : null;
}

function startView(stack: LocalStack, workload: Workload | null, io: RunIO): () => void {
  const { screen } = io;
  const draw = () => {
    try {
      const state = viewState(stack, workload);
      if (screen.tty) screen.draw(statusFrame(state));
      else screen.print(statusLine(state));
    } catch (err) {
      screen.print(`live view: ${(err as Error).message}`);
    }
  };
  const timer = setInterval(draw, screen.tty ? 1_000 : 5_000);
  return () => {
    clearInterval(timer);
    draw();
    screen.release();
  };
}

async function backfillProducts(stack: LocalStack, workload: Workload, io: RunIO): Promise<void> {
  if (!(await workload.hasProducts())) await workload.prefillProducts(200);
  const url = stack.functions.backfill?.url;
  if (!url) return;
  const res = await fetch(`${url}/backfills`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tables: [stack.schema.products.name], targets: ['replica'] }),
  });
  io.screen.print(`backfill of ${stack.schema.products.name} requested: HTTP ${res.status}`);
}

/**
 * Stream rows each history table holds now: on state restored from `--data-dir` these are the earlier runs'
 * rows, which this run's journal does not hold, and the verdict counts them on top of its mods.
 */
function historyStreamRows(stack: LocalStack): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of stack.schema.tables) {
    if (!t.history) continue;
    try {
      const rows = stack.emulators.bigquery.admin.tableRows(LOCAL.dataset, t.history);
      out[t.history] = rows.filter((r) => (r as { mod_type?: unknown }).mod_type !== 'SNAPSHOT').length;
    } catch {
      out[t.history] = 0;
    }
  }
  return out;
}

/** `npm start`'s exit code when the pipeline stopped on its configuration (docs/local.md). */
export const STOPPED_EXIT = 3;

/** Raised when the scheduler stopped the pipeline: nothing will replicate until the configuration is fixed. */
class PipelineStopped extends Error {}

/** The full reason when the manifest says `stopped` (every line of it), else null. */
function stoppedReason(stack: LocalStack): string | null {
  const p = stack.progress();
  return p.state === 'stopped' ? (p.reason ?? 'no reason recorded') : null;
}

/**
 * Resolves with the reason once the pipeline is stopped: waiting for catch-up then cannot end well, so the
 * run ends at once instead of spending the whole catch-up timeout.
 */
function whenStopped(stack: LocalStack): { stopped: Promise<string>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const stopped = new Promise<string>((resolve) => {
    timer = setInterval(() => {
      const reason = stoppedReason(stack);
      if (reason !== null) resolve(reason);
    }, 500);
  });
  return { stopped, cancel: () => clearInterval(timer) };
}

/** Ticks until the scheduler has started the pipeline (it answers 200 once the ledger is written). */
async function startPipeline(stack: LocalStack, io: RunIO): Promise<void> {
  for (let attempt = 1; attempt <= 20; attempt++) {
    const { status, body } = await stack.tick();
    const reason = stoppedReason(stack);
    if (reason !== null) throw new PipelineStopped(reason);
    if (status === 200) return;
    if (attempt === 20)
      throw new Error(`the scheduler did not start the pipeline: HTTP ${status} ${JSON.stringify(body)}`);
    io.screen.print(`waiting for the scheduler (HTTP ${status})…`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Runs until the duration ends or `io.interrupted` resolves, then catches up and verifies. */
export async function runLocal(stack: LocalStack, options: StartOptions, io: RunIO): Promise<number> {
  try {
    return await runUntilVerdict(stack, options, io);
  } catch (err) {
    if (!(err instanceof PipelineStopped)) throw err;
    await stack.stopTicking();
    io.screen.print(`pipeline stopped: ${err.message}\nnothing replicates until this is fixed; no verdict`);
    return STOPPED_EXIT;
  }
}

async function runUntilVerdict(stack: LocalStack, options: StartOptions, io: RunIO): Promise<number> {
  const seed = options.seed ?? freshSeed();
  const workload = options.workload ? stack.workload(seed) : null;
  if (workload) io.screen.print(`workload seed ${seed} (replay with --seed ${seed})`);
  if (workload && stack.restored) {
    await workload.resume();
    io.screen.print('continuing on the state restored from --data-dir');
  }
  const earlierRows = stack.restored ? historyStreamRows(stack) : {};
  // The first tick starts the pipeline at "now"; the workload must only write after that, or its first
  // changes would predate the stream's start and be missing from history.
  await startPipeline(stack, io);
  io.running?.();
  // The tick that started the ledger sent the pipeline's START event: sum up the graph it carried.
  await printLineage(stack, (line) => io.screen.print(line), { all: options.lineage });
  if (workload && options.backfill) await backfillProducts(stack, workload, io);
  stack.startTicking(options.tickMs);
  workload?.start(Math.max(1, Math.round(1000 / options.rate)));
  const stopView = startView(stack, workload, io);
  const watch = whenStopped(stack);
  const stopped = watch.stopped.then((reason) => {
    throw new PipelineStopped(reason);
  });
  stopped.catch(() => {});
  try {
    return await runAndVerify(stack, options, io, { workload, stopView, stopped, seed, earlierRows });
  } catch (err) {
    await workload?.stop();
    stopView();
    throw err;
  } finally {
    watch.cancel();
  }
}

async function runAndVerify(
  stack: LocalStack,
  options: StartOptions,
  io: RunIO,
  run: {
    workload: Workload | null;
    stopView: () => void;
    stopped: Promise<never>;
    seed: number;
    earlierRows: Record<string, number>;
  },
): Promise<number> {
  const { workload, stopView, stopped, seed, earlierRows } = run;
  const duration =
    options.durationSeconds === undefined
      ? new Promise<void>(() => {})
      : new Promise<void>((r) => setTimeout(r, (options.durationSeconds ?? 0) * 1000).unref());
  await Promise.race([duration, io.interrupted, stopped]);
  await workload?.stop();
  const target = workload?.lastCommit ?? fromNanos(stack.emulators.spanner.admin.nowNs());
  io.screen.print(`catching up to ${formatTimestamp(target)} (the last commit)…`);
  const caughtUp = await Promise.race([
    stack.waitForCatchUp(target, options.catchUpTimeoutSeconds * 1000),
    stopped,
  ]);
  stopView();
  await stack.stopTicking();
  if (!caughtUp) io.screen.print(`not caught up after ${options.catchUpTimeoutSeconds}s`);
  // Without a prefill the workload wrote every change the stream carried: each history row exactly once.
  const result = await stack.verify(workload?.journal, {
    journalComplete: !options.backfill,
    earlierRows,
  });
  io.screen.print(formatVerdict(result));
  if (!result.equal && workload) io.screen.print(`seed ${seed}`);
  return result.equal && caughtUp ? 0 : 1;
}
