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
import { type RunReport, runScenario, type Scenario } from './support/scenario';

// Jest's timeout only ends a hung run: the scenario's own bounds (after its workload) fail first, with the seed.
const BOUND = Number(process.env.E2E_BOUND ?? 150_000);

/**
 * One fault family as a test: its run is named after the test (the replay line names it), and `check` reads
 * what the run reports.
 */
function family(
  name: string,
  run: Omit<Scenario, 'name' | 'file'>,
  check: (report: RunReport) => void,
  bound = BOUND,
): void {
  it(name, async () => check(await runScenario({ name, file: __filename, ...run })), bound);
}

describe('end-to-end faults', () => {
  family('duplicated, delayed and failed reader tasks', { plan: taskFaults() }, (run) => {
    expect(run.fired.tasks).toBeGreaterThan(0);
    expect(run.log.some((l) => l.startsWith('duplicated'))).toBe(true);
  });

  family(
    'reader killed at random points and restarted',
    {
      plan: readerKills(2),
      catchUpMs: 30_000,
      // Each kill costs its partitions a lease expiry (10 s) before they move on; on a shared machine
      // two of them and the catch-up outlast the default bound.
      boundMs: 75_000,
    },
    (run) => expect(run.stack.functions.reader?.starts).toBe(3),
    BOUND + 30_000,
  );

  family('concurrent scheduler ticks', { plan: concurrentTicks() }, (run) => {
    expect(run.log.some((l) => l.startsWith('ticks'))).toBe(true);
  });

  family('Cloud Storage 412, 429 and 503 on the ledger', { plan: storageFaults() }, (run) => {
    expect(run.fired.gcs).toBeGreaterThan(0);
  });

  family('Spanner UNAVAILABLE mid-stream', { plan: spannerFaults() }, (run) => {
    expect(run.fired.spanner).toBeGreaterThan(0);
  });

  family('BigQuery append errors and dropped connections', { plan: bigqueryFaults() }, (run) => {
    expect(run.fired.bigquery).toBeGreaterThan(0);
  });

  family(
    'reader killed after BigQuery acknowledged, before the ledger moved (PostgreSQL)',
    {
      dialect: 'POSTGRESQL',
      plan: killAfterAck(),
      steps: 32,
      catchUpMs: 30_000,
      // The kill waits for the held append and the lease to expire (10 s) before catch-up.
      boundMs: 60_000,
    },
    (run) => {
      expect(run.log.some((l) => l.startsWith('killed after BigQuery acknowledged'))).toBe(true);
      // The successor re-read the window and found its rows written.
      expect(run.events.get('history.rows-already-written') ?? 0).toBeGreaterThan(0);
    },
    BOUND + 15_000,
  );

  family(
    'a reader slower than its lease, taken over and carrying on',
    {
      plan: slowReader(),
      catchUpMs: 30_000,
      // The held append outlasts the workload; the run waits for it before catch-up counts.
      boundMs: 75_000,
    },
    (run) => {
      expect(run.log.some((l) => l.startsWith('slow reader'))).toBe(true);
      expect(run.fired.bigquery).toBeGreaterThan(0);
      // The slow reader lost its lease: its next ledger write was refused.
      expect(run.events.get('task.conflict') ?? 0).toBeGreaterThan(0);
    },
    BOUND + 30_000,
  );

  const backfill = racingBackfill();
  family('a backfill racing live changes', { plan: backfill }, () => {
    expect(backfill.job()).toMatchObject({ state: 'succeeded' });
  });
});
