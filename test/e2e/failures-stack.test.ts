/**
 * Failure families on the local stack, both dialects, with faults injected only through the emulators' admin
 * handles (or done as an operator would, through the official clients):
 *
 * - a partial flush: a history append fails (a transient outage) after an earlier flush of the same window
 *   was acknowledged; the retry starts at that boundary, the replica ends equal to Spanner and the history
 *   holds every mod exactly once;
 * - a replica table deleted under the running pipeline: the partition that meets its changes fails with a
 *   permanent error naming the table and the repair (GET /status), the other partition flows; after the
 *   repair it names (backfill the replica, retry the partition) BigQuery equals Spanner, no history row lost
 *   or doubled. The reader and scheduler processes are restarted after the drop, so the instances that meet
 *   the missing table never saw it: the ledger's marker still tells them it was deleted, not new;
 * - a stalled reader: one history append held past the reader's lease; the status names the expired lease,
 *   the scheduler hands the partition to another reader, the stalled one's late ledger write is refused, and
 *   nothing is lost or doubled.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { LOCAL } from '../../local/stack-config';
import type { Dialect } from '../../shared/domain/change-record';
import {
  committer,
  expectEveryModOnce,
  failedPartition,
  keepLogs,
  operatorPost,
  status,
  tickEvery400ms,
  until,
  verdict,
} from './support/failures';
import { useLocalStack } from './support/local-stack';

const BOUND = 150_000;

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  'failure families on the local stack, %s',
  (dialect) => {
    let c: ReturnType<typeof committer>;
    const logs: Array<Record<string, unknown>> = [];

    const stack = useLocalStack(
      {
        dialect,
        // Windows long-poll, so records arrive while a window is open and it flushes several times.
        mode: 'continuous',
        churnMs: 0,
        onFunctionLog: keepLogs(logs),
      },
      async () => {
        await tickEvery400ms(stack);
        c = committer(stack, 21);
      },
    );

    it(
      'a partial flush: the retry starts at the acknowledged boundary and writes no history twice',
      async () => {
        const bq = stack.emulators.bigquery.admin;
        // A history connection lives for one window: its second append (the window's second flush, after the
        // first was acknowledged) fails as a transient outage.
        const rule = bq.faults.add({
          method: 'AppendRows',
          times: 1,
          afterItems: 1,
          code: 14,
          message: 'The service is currently unavailable.',
          target: '_history/streams/',
        });
        for (let i = 0; i < 40; i++) {
          await c.insert('customers', 1 + (i % 2));
          await new Promise((r) => setTimeout(r, 60));
        }
        const fired = () => bq.faults.list().find((r) => r.id === rule)?.fired ?? 0;
        await until('the injected append failure', async () => (fired() === 1 ? true : undefined), 60_000);
        expect(await stack.waitForCatchUp(c.state.last, 60_000)).toBe(true);
        await stack.stopTicking();
        const failed = logs.filter((l) => l.message === 'task.failed');
        expect(failed).toHaveLength(1);
        // The failed window had flushes acknowledged before the failure: it names where the retry starts.
        expect(failed[0]).toMatchObject({ retryable: true, acknowledged: expect.any(String) });
        expect(await verdict(stack)).toBe(true);
        await expectEveryModOnce(stack, c, ['customers']);
        stack.startTicking(400);
      },
      BOUND,
    );

    it(
      'a replica table dropped under the pipeline: its partition fails naming it, the others flow; backfill and retry repair it',
      async () => {
        const { customers } = stack.schema;
        const backfill = stack.functions.backfill!.url;
        for (let i = 0; i < 4; i++) await c.insert('customers');
        await c.insert('orders', 4);
        expect(await stack.waitForCatchUp(c.state.last, 60_000)).toBe(true);
        const dataset = stack.emulators.bigquery.bigquery().dataset(LOCAL.dataset);
        await dataset.table('customers').delete();
        // Cold starts: the instances that meet the missing table have never planned it.
        await Promise.all([stack.functions.reader!.restart(), stack.functions.scheduler!.restart()]);
        const orders = () => stack.emulators.bigquery.admin.tableRows(LOCAL.dataset, 'orders').length;
        const before = orders();
        await c.insert('customers');
        for (let i = 0; i < 16; i++) await c.insert('orders');
        const failed = await failedPartition(stack);
        expect(failed.partitions.failed).toBe(1);
        const [error] = failed.lastErrors;
        expect(error).toMatchObject({ kind: 'permanent', state: 'failed' });
        expect(error?.message).toMatch(/BigQuery table sluice_demo\.customers was not found/);
        expect(error?.message).toMatch(/POST \/backfills/);
        // Not recreated empty by the new instances; the scheduler's table list names it too.
        expect((await dataset.table('customers').exists())[0]).toBe(false);
        const planned = await until(
          'the failing table in the status',
          async () =>
            (await status(stack)).tables?.find((t) => t.source === customers.name && t.state === 'failing'),
          60_000,
        );
        expect(planned.reason).toMatch(/BigQuery table sluice_demo\.customers was not found/);
        // The other partition keeps flowing: orders committed after the drop arrive.
        await until('orders after the drop', async () => (orders() > before ? true : undefined), 60_000);
        expect((await status(stack)).partitions.failed).toBe(1);
        // The repair the error names: backfill the replica (recreated and reloaded), then retry.
        const res = await operatorPost(stack, '/backfills', {
          tables: [customers.name],
          targets: ['replica'],
        });
        expect(res.status).toBe(202);
        const id = String(((await res.json()) as { id: string }).id);
        await until(
          'the backfill',
          async () => {
            const job = (await (await fetch(`${backfill}/backfills/${encodeURIComponent(id)}`)).json()) as {
              state: string;
            };
            if (job.state === 'failed' || job.state === 'cancelled') throw new Error(JSON.stringify(job));
            return job.state === 'succeeded' ? job : undefined;
          },
          60_000,
        );
        const retried = await operatorPost(stack, '/partitions/retry');
        expect(((await retried.json()) as { retried: string[] }).retried).toEqual([error?.partition]);
        expect(await stack.waitForCatchUp(c.state.last, 60_000)).toBe(true);
        await stack.stopTicking();
        expect((await status(stack)).partitions.failed).toBe(0);
        expect(await verdict(stack)).toBe(true);
        await expectEveryModOnce(stack, c);
        stack.startTicking(400);
      },
      BOUND,
    );

    it(
      'a stalled reader: status names its expired lease, the partition is taken over, nothing lost or doubled',
      async () => {
        const bq = stack.emulators.bigquery.admin;
        const conflicts = () => logs.filter((l) => l.message === 'task.conflict').length;
        const conflictsBefore = conflicts();
        await c.insert('customers', 2);
        expect(await stack.waitForCatchUp(c.state.last, 60_000)).toBe(true);
        // One history append held 25 s: its reader is stuck mid-window past its 10 s lease.
        const hold = bq.faults.add({
          method: 'AppendRows',
          times: 1,
          delayMs: 25_000,
          target: '_history/streams/',
        });
        for (let i = 0; i < 6; i++) await c.insert('customers');
        const held = () => bq.faults.list().find((r) => r.id === hold)?.fired ?? 0;
        await until('the held append', async () => (held() === 1 ? true : undefined), 60_000);
        // Ticks by hand from here, so the status the tick that finds the expired lease wrote stays readable.
        await stack.stopTicking();
        const found = await until(
          'the stalled lease in the status',
          async () => {
            expect((await stack.tick()).status).toBe(200);
            const s = await status(stack);
            return s.stalled?.length ? s : undefined;
          },
          60_000,
        );
        expect(found.stalled).toEqual([
          expect.objectContaining({
            partition: expect.any(String),
            holder: expect.stringMatching(/^reader/),
          }),
        ]);
        expect(found.stalled![0]!.secondsPastLease).toBeGreaterThanOrEqual(0);
        stack.startTicking(400);
        for (let i = 0; i < 6; i++) await c.insert(i % 2 === 0 ? 'customers' : 'orders');
        expect(await stack.waitForCatchUp(c.state.last, 60_000)).toBe(true);
        // The stalled reader wakes up to a lease it lost: its next ledger write is refused.
        await until(
          'the stalled reader refused',
          async () => (conflicts() > conflictsBefore ? true : undefined),
          60_000,
        );
        await stack.stopTicking();
        expect((await status(stack)).stalled).toEqual([]);
        expect(await verdict(stack)).toBe(true);
        await expectEveryModOnce(stack, c);
        stack.startTicking(400);
      },
      BOUND,
    );
  },
);
