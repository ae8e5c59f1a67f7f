/**
 * The end-to-end fault suite, one test per fault family, on a fresh local stack each: a seeded workload with
 * partition churn runs while the family's faults strike; afterwards the pipeline must catch up, every replica
 * must equal Spanner and every raw history table must hold each committed mod exactly once
 * (`COUNT(*) = COUNT(DISTINCT change_id) = mods committed`). The mixed run (faults-mixed.test.ts) has every
 * family strike in both dialects. A failing run prints its seed; `SLUICE_E2E_SEED=<seed>` replays it.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { racingBackfill } from './support/backfill';
import {
  bigqueryFaults,
  concurrentTicks,
  killAfterAck,
  readerKills,
  slowReader,
  spannerFaults,
  storageFaults,
  taskFaults,
} from './support/faults';
import { runScenario } from './support/scenario';

// Jest's timeout only ends a hung run: the scenario's own bounds (after its workload) fail first, with the seed.
const BOUND = Number(process.env.E2E_BOUND ?? 150_000);

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
        // Each kill costs its partitions a lease expiry (10 s) before they move on; on a shared machine
        // two of them and the catch-up outlast the default bound.
        boundMs: 75_000,
      });
      expect(run.stack.functions.reader?.starts).toBe(3);
    },
    BOUND + 30_000,
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
    'reader killed after BigQuery acknowledged, before the ledger moved (PostgreSQL)',
    async () => {
      const run = await runScenario({
        name: 'reader killed after BigQuery acknowledged, before the ledger moved (PostgreSQL)',
        file: __filename,
        dialect: 'POSTGRESQL',
        plan: killAfterAck(),
        steps: 32,
        catchUpMs: 30_000,
        // The kill waits for the held append and the lease to expire (10 s) before catch-up.
        boundMs: 60_000,
      });
      expect(run.log.some((l) => l.startsWith('killed after BigQuery acknowledged'))).toBe(true);
      // The successor re-read the window and found its rows written.
      expect(run.events.get('history.rows-already-written') ?? 0).toBeGreaterThan(0);
    },
    BOUND + 15_000,
  );

  it(
    'a reader slower than its lease, taken over and carrying on',
    async () => {
      const run = await runScenario({
        name: 'a reader slower than its lease, taken over and carrying on',
        file: __filename,
        plan: slowReader(),
        catchUpMs: 30_000,
        // The held append outlasts the workload; the run waits for it before catch-up counts.
        boundMs: 75_000,
      });
      expect(run.log.some((l) => l.startsWith('slow reader'))).toBe(true);
      expect(run.fired.bigquery).toBeGreaterThan(0);
      // The slow reader lost its lease: its next ledger write was refused.
      expect(run.events.get('task.conflict') ?? 0).toBeGreaterThan(0);
    },
    BOUND + 30_000,
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
