/**
 * One simulated run from a seed (or a recorded schedule), checked against every invariant, and the named
 * scenarios the runner and the fixed-seed test choose from.
 */
import { runBackfill } from './backfill';
import { Decisions } from './decisions';
import { finalInvariants, InvariantError, stepInvariants } from './invariants';
import { DEFAULT_SOURCE } from './source';
import { DEFAULT_SCENARIO, type Scenario, SimWorld } from './world';

/** The scenarios by name (`--scenario NAME`). */
export const SCENARIOS: Record<string, Scenario> = {
  default: DEFAULT_SCENARIO,
  /** Heavy churn: many splits and merges, every split delivered as several records, slow chunks. */
  churn: {
    ...DEFAULT_SCENARIO,
    name: 'churn',
    steps: 200,
    roots: 4,
    churn: 0.25,
    source: { ...DEFAULT_SOURCE, splitRecords: 0.8, slowChunk: 0.1 },
  },
  /** A backfill under GCS faults (any call, lost answers) and BigQuery forgetting committed streams. */
  backfill: { ...DEFAULT_SCENARIO, name: 'backfill', backfill: { store: 0.08, forget: 0.5 } },
  /**
   * A day of a busy stream compressed: a long run in which partitions split and merge for many generations
   * while every fault family strikes at once, so lineages grow deep, the ledger is cleaned up behind them
   * many times, and kills meet every stage of it.
   */
  day: {
    ...DEFAULT_SCENARIO,
    name: 'day',
    steps: 600,
    roots: 3,
    churn: 0.15,
    storeFaults: 0.1,
    duplicates: 0.2,
    kills: 0.08,
    tickKills: 0.08,
    source: { ...DEFAULT_SOURCE, splitRecords: 0.6, queryFails: 0.1, slowChunk: 0.05 },
  },
  /** The services misbehave as often as they may: GCS faults, duplicates, failing queries. */
  faults: {
    ...DEFAULT_SCENARIO,
    name: 'faults',
    storeFaults: 0.1,
    duplicates: 0.3,
    source: { ...DEFAULT_SOURCE, queryFails: 0.2 },
  },
};

/** The outcome of one run. */
export interface RunResult {
  seed: number;
  scenario: string;
  ok: boolean;
  /** The broken invariant's name, or `crash` for an exception out of the simulator. */
  invariant?: string;
  message?: string;
  /** Every draw of the run, in order (a schedule that replays it). */
  log: number[];
  /** How often each legal behaviour fired (see {@link Decisions.note}). */
  fired: Record<string, number>;
  steps: number;
}

/** Runs one seed of a scenario; with `replay`, the schedule is read from it instead of drawn. */
export async function runSeed(
  seed: number,
  scenario: Scenario,
  replay: readonly number[] | null = null,
): Promise<RunResult> {
  const rng = new Decisions(seed, replay);
  const world = new SimWorld(rng, scenario);
  const base = { seed, scenario: scenario.name, log: rng.log, fired: rng.fired };
  try {
    if (scenario.backfill) {
      const steps = await runBackfill(rng, scenario.backfill);
      return { ...base, ok: true, steps };
    }
    for (let i = 0; i < scenario.steps; i++) {
      const status = await world.step();
      if (status) await stepInvariants(world, status);
    }
    const status = await world.catchUp();
    const answered = world.h.history.alreadyExistsAnswers;
    if (answered > 0) rng.fired['bigquery-already-exists-answered'] = answered;
    if (!status) throw new InvariantError('caught-up', 'the last tick failed with no fault injected');
    await finalInvariants(world, status);
    return { ...base, ok: true, steps: world.steps };
  } catch (err) {
    const invariant = err instanceof InvariantError ? err.invariant : 'crash';
    const message = err instanceof Error ? err.message : String(err);
    return { ...base, ok: false, invariant, message, steps: world.steps };
  }
}
