/**
 * A lookup whose dimension table was created after the fact rows were committed, on the local stack, both
 * dialects (#24 bug 5, ADR-2123): the pipeline starts at a timestamp before two orders were committed, and
 * only then is Statuses created and filled, so the pipeline first reads those orders after the dimension
 * exists. An as-of-commit lookup at their commit timestamps must find no row — Spanner answers NOT_FOUND for
 * a read of a table before its creation — so their history and replica rows carry NULL and the status counts
 * two lookups missing; an order committed after the dimension's rows gets its label.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { createTable, type DemoTable } from '../../local/demo-schema';
import type { LocalStack } from '../../local/stack';
import type { Dialect } from '../../shared/domain/change-record';
import { bigQueryRows, bigQueryTable, historyKeys, type Row } from './support/bigquery';
import { catchUp, commit, startEnrichmentStack, tableName, text } from './support/enrichment';

/**
 * How far ahead the pipeline's start is set: the stack (and with it the change stream) must exist before it,
 * since a change stream cannot be read from before its creation (spanner-change-streams.md, start_timestamp).
 * The test sleeps until then; a stack starts in about 4 s with two jest workers on two cores, and a start
 * slower than this fails the block with a message that says so.
 */
const START_AHEAD_MS = 12_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  'a lookup of rows from before their dimension existed on the local stack, %s',
  (dialect) => {
    const n = (name: string) => tableName(dialect, name);
    let startAt: Date;
    let stack: LocalStack;

    beforeAll(async () => {
      startAt = new Date(Date.now() + START_AHEAD_MS);
      stack = await startEnrichmentStack(dialect, {
        orderLookups: [
          { table: n('Statuses'), key: { code: 'status' }, columns: ['label'], prefix: 'status_' },
        ],
        functionEnv: { SLUICE_START_AT: startAt.toISOString() },
      });
      if (Date.now() >= startAt.getTime())
        throw new Error(`the stack took over ${START_AHEAD_MS} ms to start: the pipeline's start has passed`);
    }, 60_000);

    afterAll(async () => {
      await stack?.stop();
    });

    it('gives NULLs for the orders committed before it, counted missing; a later order gets its label', async () => {
      const db = stack.database;
      const orders = n('Orders');
      const order = (id: string, status: string) => ({
        order_id: id,
        customer_id: '1',
        amount: '3',
        quantity: '1',
        placed_at: '2026-12-01T10:00:00Z',
        status,
      });
      await sleep(startAt.getTime() - Date.now() + 1_000);
      await commit(db, (tx) => tx.insert(orders, [order('o1', 'new'), order('o2', 'paid')]));
      const statuses: DemoTable = {
        name: n('Statuses'),
        key: ['code'],
        columns: [
          { name: 'code', kind: 'string', nullable: false },
          { name: 'label', kind: 'string', nullable: true },
        ],
        replica: 'statuses',
        history: 'statuses_history',
      };
      const [operation] = await db.updateSchema([createTable(statuses, dialect === 'POSTGRESQL')]);
      await operation.promise();
      await commit(db, (tx) =>
        tx.insert(statuses.name, [
          { code: 'new', label: 'New' },
          { code: 'paid', label: 'Paid' },
        ]),
      );
      const last = await commit(db, (tx) => tx.insert(orders, order('o3', 'new')));

      // The first tick validates the lookup against the dimension as it is now, and starts the pipeline.
      expect((await stack.tick()).status).toBe(200);
      await catchUp(stack, last);

      const history = await bigQueryRows(
        stack,
        `SELECT keys, status_label FROM ${bigQueryTable('orders_history')} ORDER BY commit_timestamp_ns, change_id`,
      );
      expect(history.map((r) => [historyKeys(r).order_id, text(r.status_label)])).toEqual([
        ['o1', null],
        ['o2', null],
        ['o3', 'New'],
      ]);
      const replica = await bigQueryRows(
        stack,
        `SELECT order_id, status_label FROM ${bigQueryTable('orders')} ORDER BY order_id`,
      );
      expect(replica.map((r) => [r.order_id, text(r.status_label)])).toEqual([
        ['o1', null],
        ['o2', null],
        ['o3', 'New'],
      ]);

      // The reader instances publish their counters; the scheduler sums them into the status.
      const id = `${orders}.lookups[2]`;
      const counters = () =>
        (stack.status()?.enrichment as { lookups?: Record<string, Row> } | undefined)?.lookups?.[id];
      for (let i = 0; i < 60 && (counters()?.missing as number | undefined) !== 2; i++) {
        await stack.tick();
        await sleep(500);
      }
      await stack.stopTicking();
      expect(counters()).toMatchObject({
        dimension: n('Statuses'),
        mode: 'as-of-commit',
        missing: 2,
        unresolved: 0,
      });
    }, 150_000);
  },
);
