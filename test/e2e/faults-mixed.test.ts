/**
 * The mixed fault run, in both dialects: every fault family strikes at seeded points of one workload with
 * partition churn, the reader is killed twice (once right after BigQuery acknowledged, before the ledger moved),
 * one reader stalls past its lease, and a backfill of every demo table races the live changes.
 * The pipeline must catch up with replica = Spanner and every committed mod in history exactly once. A
 * failing run prints its seed; `SLUICE_E2E_SEED=<seed>` replays it.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { Dialect } from '../../shared/domain/change-record';
import { racingBackfill } from './support/backfill';
import { combine, mixedFaults } from './support/faults';
import { runScenario } from './support/scenario';

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])('end-to-end mixed faults, %s', (dialect) => {
  it('every fault family at once, with a racing backfill', async () => {
    const backfill = racingBackfill({ startAt: 12 });
    const run = await runScenario({
      name: 'every fault family at once, with a racing backfill',
      file: __filename,
      dialect,
      steps: 45,
      // Catch-up after every family at once takes a while on a shared machine; the bound only ends a stuck run.
      catchUpMs: 60_000,
      // Two readers die (one right after BigQuery acknowledged) and one stalls past its lease: each costs
      // a lease's expiry (10 s) before its partition moves on; the stalled append is held 25 s.
      boundMs: 130_000,
      plan: combine(backfill, mixedFaults()),
    });
    expect(backfill.job()).toMatchObject({ state: 'succeeded' });
    expect(run.log.length).toBeGreaterThan(3);
  }, 240_000);
});
