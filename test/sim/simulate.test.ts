/**
 * The simulator's fixed seeds (docs/testing.md, "Simulation"): the default scenario over seeds that pass,
 * the seeds that expose known bugs (each asserted to fail with its invariant, until the fix lands and the
 * seed moves to the passing list), and determinism: one seed is one run, and its recorded schedule replays it.
 */
import { type RunResult, runSeed, SCENARIOS } from './run';

/** Seeds of the default scenario that pass on this code (25 is a known bug's, below). */
const PASSING = Array.from({ length: 40 }, (_, i) => i + 1);

/** Seeds of the backfill scenario that pass on this code. */
const BACKFILL_PASSING = Array.from({ length: 22 }, (_, i) => i + 1);

/**
 * Seeds that find a known bug (issue #24), with the invariant each breaks. Move a seed to the passing list
 * once its bug is fixed: this test then fails on purpose, to say so.
 */
/** Seeds that found a bug of #24 on the commit before its fix (with the invariant they broke); they pass now. */
const FOUND_BUGS: Array<{ scenario: string; seed: number; invariant: string; bug: string }> = [
  // #24 bug 1: a split reported as several child-partitions records, the request deadline between them.
  { scenario: 'default', seed: 25, invariant: 'every-partition-read', bug: '#24 bug 1' },
  { scenario: 'churn', seed: 2, invariant: 'replica-covers-watermark', bug: '#24 bug 1' },
  // #24 bug 2: a committed backfill stream, the done marker's write failing, BigQuery forgetting the stream.
  { scenario: 'backfill', seed: 5, invariant: 'history-exactly-once', bug: '#24 bug 2' },
];

/**
 * The legal behaviours the default scenario draws (docs/testing.md, "Legal behaviours and their sources"), by
 * the name the run report counts them under: each must fire on the fixed seeds, or it has silently stopped.
 */
const BEHAVIOURS = [
  'same-timestamp-transactions',
  'timestamp-split-across-chunks',
  'timestamp-split-across-windows',
  'ttl-system-transaction',
  'ttl-record-delivered',
  'gcs-412-conflict',
  'bigquery-append-answer-lost',
  'bigquery-already-exists-answered',
  'bigquery-resource-exhausted',
  'bigquery-stream-finalized-by-service',
  'scheduler-killed-mid-tick',
];

describe('simulation', () => {
  const defaults: RunResult[] = [];
  beforeAll(async () => {
    for (const seed of PASSING) defaults.push(await runSeed(seed, SCENARIOS.default!));
  });

  it(`default scenario, seeds ${PASSING[0]}..${PASSING[PASSING.length - 1]}: every invariant holds`, () => {
    const failures = defaults.filter((r) => !r.ok).map((r) => `seed ${r.seed}: ${r.message}`);
    expect(failures).toEqual([]);
  });

  it('default scenario: every drawn behaviour fired at least once over the fixed seeds', () => {
    const fired: Record<string, number> = {};
    for (const r of defaults)
      for (const [name, n] of Object.entries(r.fired)) fired[name] = (fired[name] ?? 0) + n;
    expect(BEHAVIOURS.filter((name) => !fired[name])).toEqual([]);
  });

  it('backfill scenario: every invariant holds on the passing seeds', async () => {
    const failures = [];
    for (const seed of BACKFILL_PASSING) {
      const result = await runSeed(seed, SCENARIOS.backfill!);
      if (!result.ok) failures.push(`seed ${seed}: ${result.message}`);
    }
    expect(failures).toEqual([]);
  });

  it('day scenario (three roots, long churn, every fault at once): every invariant holds', async () => {
    const failures = [];
    let steps = 0;
    const fired: Record<string, number> = {};
    for (const seed of [1, 2, 3]) {
      const result = await runSeed(seed, SCENARIOS.day!);
      if (!result.ok) failures.push(`seed ${seed}: ${result.invariant} ${result.message}`);
      steps += result.steps;
      for (const [name, n] of Object.entries(result.fired)) fired[name] = (fired[name] ?? 0) + n;
    }
    expect(failures).toEqual([]);
    // A day, not an afternoon, with the instance kills and lost answers it is there for.
    expect(steps).toBeGreaterThan(1_500);
    for (const name of ['scheduler-killed-mid-tick', 'gcs-412-conflict', 'bigquery-append-answer-lost'])
      expect({ name, fired: (fired[name] ?? 0) > 0 }).toEqual({ name, fired: true });
  });

  for (const found of FOUND_BUGS) {
    it(`${found.scenario} seed ${found.seed}, which found ${found.bug} (${found.invariant}) before its fix, passes`, async () => {
      const result = await runSeed(found.seed, SCENARIOS[found.scenario]!);
      expect({ ok: result.ok, message: result.ok ? undefined : result.message }).toEqual({
        ok: true,
        message: undefined,
      });
    });
  }

  it('one seed is one run, and its recorded schedule replays it draw for draw', async () => {
    const first = await runSeed(25, SCENARIOS.default!);
    const again = await runSeed(25, SCENARIOS.default!);
    expect(again.log).toEqual(first.log);
    const replayed = await runSeed(25, SCENARIOS.default!, first.log);
    expect(replayed.log).toEqual(first.log);
    expect(replayed.message).toBe(first.message);
  });
});
