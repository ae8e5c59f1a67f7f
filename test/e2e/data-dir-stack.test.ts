/**
 * `npm start -- --data-dir <dir>` as a user runs it twice: the first stack replicates a workload and stops;
 * the second starts on the same directory, finds the demo database, the ledger, the queues and the BigQuery
 * tables restored, and the pipeline carries on from its watermark — partition tokens kept in the ledger
 * stay valid — so after more writes the replicas still equal Spanner and the histories hold every mod of
 * both runs.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LocalStack, startLocalStack } from '../../local/stack';
import type { CommittedMod } from '../../local/workload';

let dataDir: string;
let stack: LocalStack | undefined;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'sluice-data-dir-'));
});

afterAll(async () => {
  await stack?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Runs `steps` workload transactions while the scheduler ticks, then waits for the watermark to pass them. */
async function replicate(
  s: LocalStack,
  seed: number,
  steps: number,
  resume: boolean,
): Promise<CommittedMod[]> {
  const workload = s.workload(seed);
  if (resume) await workload.resume();
  s.startTicking(500);
  for (let i = 0; i < steps; i++) await workload.step();
  const caughtUp = await s.waitForCatchUp(workload.lastCommit!, 30_000);
  await s.stopTicking();
  if (!caughtUp) {
    const big = (_k: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);
    const tasks = s.emulators.tasks.admin.tasks().slice(-4);
    console.error(JSON.stringify({ progress: s.progress(), tasks }, big, 1).slice(0, 6000));
  }
  expect(caughtUp).toBe(true);
  expect(s.errors).toEqual([]);
  return workload.journal;
}

it('a stack restarted on the same --data-dir continues the pipeline where it stopped, nothing lost or repeated', async () => {
  stack = await startLocalStack({ churnMs: 0, dataDir });
  expect(stack.restored).toBe(false);
  expect((await stack.tick()).status).toBe(200);
  const first = await replicate(stack, 11, 15, false);
  await stack.stop();
  stack = undefined;
  expect(readdirSync(dataDir).sort()).toEqual([
    'bigquery',
    // The reader's dead-letter key, so letters of this run still replay in the next (ADR-2305).
    'dead-letter-key',
    'function-urls.json',
    'gcs',
    'lineage',
    'spanner',
    // The ports of the first start, listened on again by the next (ADR-2204).
    'stack-ports.json',
    'tasks',
  ]);

  stack = await startLocalStack({ churnMs: 0, dataDir });
  expect(stack.restored).toBe(true);
  const second = await replicate(stack, 12, 15, true);
  const verdict = await stack.verify([...first, ...second], { journalComplete: true });
  if (!verdict.equal) console.error(JSON.stringify(verdict, null, 2).slice(0, 4000));
  expect(verdict.equal).toBe(true);
}, 150_000);
