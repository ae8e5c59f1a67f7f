/**
 * The whole pipeline on the local stack: Spanner emulator (change streams with churn), GCS, Cloud Tasks and
 * BigQuery emulators, the three functions as processes built by the composition root. A seeded workload runs
 * while the scheduler ticks; after catching up, every replica should equal Spanner and every history hold
 * every mod.
 *
 * Known failure, marked `failing` so it flips to red once fixed (then drop `.failing`): replica tables map
 * NOT NULL Spanner columns to REQUIRED BigQuery columns, and a DELETE row carries only the key, so the Storage
 * Write API rejects it ("missing required 'name'"); the reader then records the partition as failed. The fix
 * belongs to the replica schema or sink (NULLABLE non-key columns, or placeholders on DELETE rows).
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { type LocalStack, startLocalStack } from '../../local/stack';

describe('local stack, GOOGLE_STANDARD_SQL', () => {
  let stack: LocalStack;

  beforeAll(async () => {
    stack = await startLocalStack({ dialect: 'GOOGLE_STANDARD_SQL', churnMs: 1_500 });
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it.failing('replicates a seeded workload with partition churn: replicas equal Spanner, histories hold every mod', async () => {
    // The first tick starts the pipeline at "now" (SLUICE_START_AT=latest): changes before it are not wanted.
    expect((await stack.tick()).status).toBe(200);
    const workload = stack.workload(7);
    stack.startTicking(500);
    for (let i = 0; i < 30; i++) await workload.step();
    const caughtUp = await stack.waitForCatchUp(workload.lastCommit!, 15_000);
    await stack.stopTicking();
    expect(stack.errors).toEqual([]);
    expect(caughtUp).toBe(true);
    expect((await stack.verify(workload.journal)).equal).toBe(true);
  }, 40_000);
});
