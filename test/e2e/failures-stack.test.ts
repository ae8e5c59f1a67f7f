/**
 * Failure families on the local stack, both dialects, with faults injected only through the emulators' admin
 * handles (or done as an operator would, through the official clients):
 *
 * - a partial flush: a history append fails (a transient outage) after an earlier flush of the same window
 *   was acknowledged; the retry starts at that boundary, the replica ends equal to Spanner and the history
 *   holds every mod exactly once.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { type LocalStack, startLocalStack } from '../../local/stack';
import type { Dialect } from '../../shared/domain/change-record';
import { committer, historyCounts, until, verdict } from './support/failures';

const BOUND = 150_000;

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  'failure families on the local stack, %s',
  (dialect) => {
    let stack: LocalStack;
    const logs: Array<Record<string, unknown>> = [];

    beforeAll(async () => {
      stack = await startLocalStack({
        dialect,
        // Windows long-poll, so records arrive while a window is open and it flushes several times.
        mode: 'continuous',
        churnMs: 0,
        onFunctionLog: (l) => {
          if (l.json) logs.push(l.json);
        },
      });
      expect((await stack.tick()).status).toBe(200);
      stack.startTicking(400);
    }, 60_000);

    afterAll(async () => {
      await stack?.stop();
    });

    it(
      'a partial flush: the retry starts at the acknowledged boundary and writes no history twice',
      async () => {
        const bq = stack.emulators.bigquery.admin;
        const c = committer(stack, 21);
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
        const mods = c.mods('customers');
        expect(await historyCounts(stack, 'customers_history')).toEqual({ n: mods, d: mods });
        stack.startTicking(400);
      },
      BOUND,
    );
  },
);
