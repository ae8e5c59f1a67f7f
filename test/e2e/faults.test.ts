/**
 * The end-to-end fault suite, one test per fault family, on a fresh local stack each: a seeded workload with
 * partition churn runs while the family's faults strike; afterwards the pipeline must catch up, every replica
 * must equal Spanner and no committed mod may be missing from history. A failing run prints its seed;
 * `SLUICE_E2E_SEED=<seed>` replays it.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { racingBackfill } from './support/backfill';
import {
  bigqueryFaults,
  concurrentTicks,
  readerKills,
  spannerFaults,
  storageFaults,
  taskFaults,
} from './support/faults';
import { runScenario } from './support/scenario';

const BOUND = Number(process.env.E2E_BOUND ?? 55_000);

describe('end-to-end faults', () => {
  it(
    'duplicated, delayed and failed reader tasks',
    async () => {
      const run = await runScenario({
        name: 'duplicated, delayed and failed reader tasks',
        file: __filename,
        plan: taskFaults(),
      });
      expect(run.fired.tasks).toBeGreaterThan(0);
      expect(run.log.some((l) => l.startsWith('duplicated'))).toBe(true);
    },
    BOUND,
  );

  it(
    'reader killed at random points and restarted',
    async () => {
      const run = await runScenario({
        name: 'reader killed at random points and restarted',
        file: __filename,
        plan: readerKills(2),
        catchUpMs: 30_000,
      });
      expect(run.stack.functions.reader?.starts).toBe(3);
    },
    BOUND,
  );

  it(
    'concurrent scheduler ticks',
    async () => {
      const run = await runScenario({
        name: 'concurrent scheduler ticks',
        file: __filename,
        plan: concurrentTicks(),
      });
      expect(run.log.some((l) => l.startsWith('ticks'))).toBe(true);
    },
    BOUND,
  );

  it(
    'Cloud Storage 412, 429 and 503 on the ledger',
    async () => {
      const run = await runScenario({
        name: 'Cloud Storage 412, 429 and 503 on the ledger',
        file: __filename,
        plan: storageFaults(),
      });
      expect(run.fired.gcs).toBeGreaterThan(0);
    },
    BOUND,
  );

  it(
    'Spanner UNAVAILABLE mid-stream',
    async () => {
      const run = await runScenario({
        name: 'Spanner UNAVAILABLE mid-stream',
        file: __filename,
        plan: spannerFaults(),
      });
      expect(run.fired.spanner).toBeGreaterThan(0);
    },
    BOUND,
  );

  it(
    'BigQuery append errors and dropped connections',
    async () => {
      const run = await runScenario({
        name: 'BigQuery append errors and dropped connections',
        file: __filename,
        plan: bigqueryFaults(),
      });
      expect(run.fired.bigquery).toBeGreaterThan(0);
    },
    BOUND,
  );

  it(
    'a backfill racing live changes',
    async () => {
      const backfill = racingBackfill();
      await runScenario({ name: 'a backfill racing live changes', file: __filename, plan: backfill });
      expect(backfill.job()).toMatchObject({ state: 'succeeded' });
    },
    BOUND,
  );
});
