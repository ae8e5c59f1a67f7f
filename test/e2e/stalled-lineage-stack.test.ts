/**
 * A reader stalled after it read a child-partitions record, on the local stack in both dialects (issue #15's
 * "a stalled reader is harmless"): the Spanner emulator holds the reader's change-stream query open right
 * after the record (its admin handle's query hold, no client patched), the reader's lease expires, another
 * reader takes the partition over and ends it, the churn ends the children too and the scheduler removes
 * parent and children. Then the stalled reader is let go: it must not re-create any of them (they would wait
 * forever on a parent that is gone and hold the watermark), and the pipeline goes on healthy with BigQuery
 * equal to Spanner and every mod in history once.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { LocalStack } from '../../local/stack';
import { databaseName, LOCAL } from '../../local/stack-config';
import type { Dialect } from '../../shared/domain/change-record';
import { partitionId, partitionIdFromName } from '../../shared/domain/ledger';
import {
  committer,
  expectEveryModOnce,
  keepLogs,
  status,
  tickEvery400ms,
  until,
  verdict,
} from './support/failures';
import { useLocalStack } from './support/local-stack';

const BOUND = 180_000;

/** The ids of every partition entry in the ledger bucket. */
function ledgerIds(stack: LocalStack): Set<string> {
  const names = stack.emulators.gcs.admin.objects(LOCAL.bucket).map((o) => String(o.name));
  return new Set(names.map((n) => partitionIdFromName(n)?.id).filter((id): id is string => id !== undefined));
}

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  'a reader stalled after a partition end, %s',
  (dialect) => {
    const logs: Array<Record<string, unknown>> = [];

    const stack = useLocalStack(
      {
        dialect,
        churnMs: 0,
        onFunctionLog: keepLogs(logs),
      },
      tickEvery400ms,
    );

    it(
      'resumed after its lineage was finished and removed, it resurrects nothing; the pipeline goes on healthy',
      async () => {
        const c = committer(stack, 37);
        const spanner = stack.emulators.spanner.admin;
        for (let i = 0; i < 6; i++) await c.insert(i % 2 === 0 ? 'customers' : 'orders', 2);
        expect(await stack.waitForCatchUp(c.state.last, 60_000)).toBe(true);
        // The next partition query to send its child-partitions record stays open right after it: its reader
        // has read the partition's end and stalls there, holding the lease it took for the record.
        const hold = spanner.holdChangeStreamQueryAfterEnd();
        const [split] = spanner.churnNow();
        const parent = split!.parents[0]!;
        const children = split!.children;
        await until(
          'the held reader',
          async () =>
            spanner.changeStreamHolds().find((h) => h.id === hold)?.held === parent ? true : undefined,
          60_000,
        );
        // Its lease expires, another reader takes the partition over and ends it; the children are churned
        // until they have ended too, and the lineage runs on while the stalled reader waits.
        const ended = () =>
          spanner
            .changeStreamEngine(databaseName())!
            .admin.partitions()
            .filter((p) => children.includes(p.token) && p.endNs !== null).length;
        while (ended() < children.length) spanner.churnNow();
        for (let i = 0; i < 6; i++) await c.insert(i % 2 === 0 ? 'orders' : 'customers', 2);
        const lineage = [parent, ...children].map(partitionId);
        // The scheduler removes parent and children once their successors started.
        await until(
          'the lineage removed from the ledger',
          async () => {
            const ids = ledgerIds(stack);
            return lineage.every((id) => !ids.has(id)) ? true : undefined;
          },
          90_000,
        );
        expect(await stack.waitForCatchUp(c.state.last, 60_000)).toBe(true);
        expect(spanner.changeStreamHolds().find((h) => h.id === hold)).toMatchObject({ released: false });
        // The stalled reader goes on: it finds its parent gone and gives up without creating a child.
        const refusal = `not creating the children of ${partitionId(parent)}`;
        const refused = () =>
          logs.filter((l) => l.message === 'task.conflict' && String(l.reason).includes(refusal)).length;
        expect(refused()).toBe(0);
        expect(spanner.releaseChangeStreamQuery(hold)).toBe(true);
        await until('the stalled reader refused', async () => (refused() > 0 ? true : undefined), 60_000);
        const after = ledgerIds(stack);
        expect(lineage.filter((id) => after.has(id))).toEqual([]);
        // Nothing to clean up behind it either: no orphan was ever created.
        for (let i = 0; i < 4; i++) await c.insert(i % 2 === 0 ? 'customers' : 'orders');
        expect(await stack.waitForCatchUp(c.state.last, 60_000)).toBe(true);
        await stack.stopTicking();
        expect((await stack.tick()).status).toBe(200);
        expect(logs.filter((l) => l.message === 'partition.orphan-removed')).toEqual([]);
        const ids = ledgerIds(stack);
        expect(lineage.filter((id) => ids.has(id))).toEqual([]);
        const s = await status(stack);
        expect(s).toMatchObject({ state: 'running' });
        expect(s.partitions.failed).toBe(0);
        expect(s.lastErrors).toEqual([]);
        expect(s.stalled).toEqual([]);
        expect(await verdict(stack)).toBe(true);
        await expectEveryModOnce(stack, c);
      },
      BOUND,
    );
  },
);
