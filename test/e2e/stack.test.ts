/**
 * The whole pipeline on the local stack: Spanner emulator (change streams with churn), GCS, Cloud Tasks and
 * BigQuery emulators, the three functions as processes built by the composition root. A seeded workload runs
 * while the scheduler ticks; after catching up, every replica must equal Spanner and every history hold
 * every mod. Runs in both dialects.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { LocalStack } from '../../local/stack';
import type { Dialect } from '../../shared/domain/change-record';
import { useLocalStack } from './support/local-stack';

/** What an operator would look at when the pipeline does not catch up: progress and the latest tasks. */
function diagnostics(stack: LocalStack, lastCommit: unknown): string {
  const big = (_k: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);
  const tasks = stack.emulators.tasks.admin.tasks().slice(-6);
  return JSON.stringify({ progress: stack.progress(), lastCommit, tasks }, big, 1).slice(0, 6000);
}

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])('local stack, %s', (dialect) => {
  const stack = useLocalStack({ dialect, churnMs: 1_500 });

  it('replicates a seeded workload with partition churn: replicas equal Spanner, histories hold every mod exactly once', async () => {
    // The first tick starts the pipeline at "now" (SLUICE_START_AT=latest): changes before it are not wanted.
    expect((await stack.tick()).status).toBe(200);
    const workload = stack.workload(7);
    stack.startTicking(500);
    for (let i = 0; i < 30; i++) await workload.step();
    const caughtUp = await stack.waitForCatchUp(workload.lastCommit!, 15_000);
    if (!caughtUp) console.error(diagnostics(stack, workload.lastCommit));
    await stack.stopTicking();
    expect(stack.errors).toEqual([]);
    expect(caughtUp).toBe(true);
    const verdict = await stack.verify(workload.journal, { journalComplete: true });
    if (!verdict.equal) console.error(JSON.stringify(verdict, null, 2).slice(0, 4000));
    expect(verdict.equal).toBe(true);
  }, 40_000);
});
