/**
 * Enrichment on the local stack, both dialects, through the official clients: Orders is replicated with an
 * as-of-commit lookup of its customer and a latest one. A customer renamed between two orders, an order of a
 * customer that does not exist, an update and a delete: every history row's as-of-commit columns equal what a
 * Spanner join gives at that row's commit timestamp (the first order keeps the old name), the replica's are
 * as of each row's last change, the missing customer gives NULLs and is counted in the status. A backfill
 * enriches its rows at the snapshot timestamp, also through a dimension keyed on BYTES + TIMESTAMP (mapped
 * in another order than declared), each row equal to a Spanner join at that timestamp to the nanosecond.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { PreciseDate } from '@google-cloud/precise-date';
import type { LocalStack } from '../../local/stack';
import type { Dialect } from '../../shared/domain/change-record';
import type { Timestamp } from '../../shared/domain/timestamp';
import { bigQueryRows, bigQueryTable, historyKeys, type Row } from './support/bigquery';
import { catchUp, commit, startEnrichmentStack, text } from './support/enrichment';

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  'enrichment on the local stack, %s',
  (dialect) => {
    const pg = dialect === 'POSTGRESQL';
    const n = (name: string) => (pg ? name.toLowerCase() : name);
    let stack: LocalStack;

    beforeAll(async () => {
      stack = await startEnrichmentStack(dialect);
    }, 60_000);

    afterAll(async () => {
      await stack?.stop();
    });

    /** What a LEFT JOIN of the order to its customer gives at `at` (for a deleted order: its customer key). */
    async function joined(at: string, orderId: string, customerId: string | null): Promise<Row> {
      const [snapshot] = await stack.database.getSnapshot({ readTimestamp: new PreciseDate(at) });
      try {
        const sql = customerId
          ? `SELECT c.name, c.balance FROM ${n('Customers')} c WHERE c.customer_id = ${customerId}`
          : `SELECT c.name, c.balance FROM ${n('Orders')} o LEFT JOIN ${n('Customers')} c ON c.customer_id = o.customer_id WHERE o.order_id = '${orderId}'`;
        const [rows] = await snapshot.run({ sql, json: true });
        const row = (rows[0] ?? {}) as Row;
        return { name: text(row.name), balance: text(row.balance) };
      } finally {
        snapshot.end();
      }
    }

    /** Backfills `table` through the backfill function until the job succeeded; what the POST answered. */
    async function backfill(table: string): Promise<Row> {
      const url = stack.functions.backfill!.url;
      const posted = await fetch(`${url}/backfills`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tables: [table] }),
      });
      const body = (await posted.json()) as Row;
      expect(posted.status).toBe(202);
      let view: Row = {};
      for (let i = 0; i < 120 && view.state !== 'succeeded' && view.state !== 'failed'; i++) {
        await new Promise((r) => setTimeout(r, 250));
        view = (await (await fetch(`${url}/backfills/${String(body.id)}`)).json()) as Row;
      }
      expect(view.state).toBe('succeeded');
      return body;
    }

    it('history rows equal a Spanner join at each commit timestamp; the replica as of its last change; a missing customer is counted', async () => {
      expect((await stack.tick()).status).toBe(200);
      const db = stack.database;
      const customers = n('Customers');
      const orders = n('Orders');
      const order = (id: string, customer: string) => ({
        order_id: id,
        customer_id: customer,
        amount: '12.5',
        quantity: '1',
        placed_at: '2026-12-01T10:00:00.000001Z',
        status: 'new',
      });
      await commit(db, (tx) =>
        tx.insert(customers, {
          customer_id: '71',
          name: 'Ann',
          balance: '10',
          active: true,
          updated_at: '2026-12-01T09:00:00Z',
        }),
      );
      await commit(db, (tx) => tx.insert(orders, order('o1', '71')));
      await commit(db, (tx) => tx.update(customers, { customer_id: '71', name: 'Anna', balance: '20' }));
      await commit(db, (tx) => tx.insert(orders, order('o2', '71')));
      await commit(db, (tx) => tx.update(orders, { order_id: 'o1', status: 'paid' }));
      await commit(db, (tx) => tx.insert(orders, order('o3', '999')));
      const last: Timestamp = await commit(db, (tx) => tx.deleteRows(orders, ['o2']));

      await catchUp(stack, last);

      const rows = await bigQueryRows(
        stack,
        `SELECT * FROM ${bigQueryTable('orders_history')} ORDER BY commit_timestamp_ns, change_id`,
      );
      expect(rows.map((r) => r.mod_type)).toEqual(['INSERT', 'INSERT', 'UPDATE', 'INSERT', 'DELETE']);
      for (const r of rows) {
        const keys = historyKeys(r);
        const old = JSON.parse(String((r.old_values as { value?: string })?.value ?? r.old_values)) as Row;
        const id = String(keys.order_id);
        const deleted = r.mod_type === 'DELETE';
        const expected = await joined(
          String(r.commit_timestamp_ns),
          id,
          deleted ? String(old.customer_id) : null,
        );
        expect({ id, name: text(r.customer_name), balance: text(r.customer_balance) }).toEqual({
          id,
          ...expected,
        });
      }
      // The first order was placed while the customer was still Ann; the second after the rename.
      expect(rows.map((r) => text(r.customer_name))).toEqual(['Ann', 'Anna', 'Anna', null, 'Anna']);
      // The latest lookup reads the newest row (its cache expires at once here).
      expect(rows.map((r) => text(r.now_name))).toEqual(['Anna', 'Anna', 'Anna', null, 'Anna']);

      const replica = await bigQueryRows(stack, `SELECT * FROM ${bigQueryTable('orders')} ORDER BY order_id`);
      expect(replica.map((r) => [r.order_id, text(r.customer_name), r.status])).toEqual([
        ['o1', 'Anna', 'paid'],
        ['o3', null, 'new'],
      ]);

      // The reader instances publish their counters; the scheduler sums them into the status.
      const id = (i: number) => `${orders}.lookups[${i}]`;
      let lookups: Record<string, Row> = {};
      for (let i = 0; i < 60 && !((lookups[id(0)]?.missing as number) >= 1); i++) {
        await stack.tick();
        lookups = ((stack.status()?.enrichment as { lookups?: Record<string, Row> })?.lookups ??
          {}) as Record<string, Row>;
        await new Promise((r) => setTimeout(r, 500));
      }
      lookups = ((stack.status()?.enrichment as { lookups?: Record<string, Row> })?.lookups ?? {}) as Record<
        string,
        Row
      >;
      expect(lookups[id(0)]).toMatchObject({ dimension: customers, mode: 'as-of-commit', unresolved: 0 });
      expect(lookups[id(0)]?.missing).toBeGreaterThanOrEqual(1);
      expect(lookups[id(1)]).toMatchObject({ mode: 'latest' });
      expect(stack.status()?.lineage).toMatchObject({ dropped: 0 });
    }, 120_000);

    it('a backfill enriches its rows at the snapshot timestamp', async () => {
      await stack.stopTicking();
      const db = stack.database;
      await commit(db, (tx) => tx.update(n('Customers'), { customer_id: '71', name: 'Anne' }));
      const body = await backfill(n('Orders'));
      const at = String(body.snapshotTimestamp);
      const rows = await bigQueryRows(
        stack,
        `SELECT * FROM ${bigQueryTable('orders_history')} WHERE mod_type = 'SNAPSHOT' ORDER BY change_id`,
      );
      const snapshot = rows.map((r) => [
        String(historyKeys(r).order_id),
        text(r.customer_name),
        text(r.now_name),
      ]);
      expect(snapshot).toEqual([
        ['o1', 'Anne', 'Anne'],
        ['o3', null, null],
      ]);
      for (const [id, name] of snapshot) expect((await joined(at, String(id), null)).name).toBe(name);
    }, 60_000);

    it('a backfill looks up a BYTES + TIMESTAMP key to the nanosecond, equal to a Spanner join at the snapshot', async () => {
      await stack.stopTicking();
      const A = Buffer.from([0, 1, 2, 255]);
      const windows = [
        { code: A, starts_at: '2026-12-01T10:00:00.123456789Z', label: 'exact' },
        { code: A, starts_at: '2026-12-01T10:00:00.123456Z', label: 'micros' },
        { code: Buffer.alloc(0), starts_at: '1969-12-31T23:59:59.999999999Z', label: 'before epoch' },
      ];
      const shipments = [
        { shipment_id: 's1', code: A, starts_at: '2026-12-01T10:00:00.123456789Z' },
        // One nanosecond off the first window: a key cut to microseconds would wrongly find 'micros'.
        { shipment_id: 's2', code: A, starts_at: '2026-12-01T10:00:00.123456788Z' },
        { shipment_id: 's3', code: A, starts_at: '2026-12-01T10:00:00.123456000Z' },
        { shipment_id: 's4', code: Buffer.alloc(0), starts_at: '1969-12-31T23:59:59.999999999Z' },
        { shipment_id: 's5', code: null, starts_at: '2026-12-01T10:00:00Z' },
      ];
      await commit(stack.database, (tx) => {
        tx.insert(n('Windows'), windows);
        tx.insert(n('Shipments'), shipments);
      });
      const body = await backfill(n('Shipments'));
      const rows = await bigQueryRows(
        stack,
        `SELECT shipment_id, window_label FROM ${bigQueryTable('shipments')} ORDER BY shipment_id`,
      );
      const got = rows.map((r) => [String(r.shipment_id), text(r.window_label)]);
      const [snapshot] = await stack.database.getSnapshot({
        readTimestamp: new PreciseDate(String(body.snapshotTimestamp)),
      });
      try {
        const [joinedRows] = await snapshot.run({
          sql: `SELECT s.shipment_id, w.label FROM ${n('Shipments')} s LEFT JOIN ${n('Windows')} w ON w.code = s.code AND w.starts_at = s.starts_at ORDER BY s.shipment_id`,
          json: true,
        });
        expect(got).toEqual((joinedRows as Row[]).map((r) => [String(r.shipment_id), text(r.label)]));
      } finally {
        snapshot.end();
      }
      expect(got).toEqual([
        ['s1', 'exact'],
        ['s2', null],
        ['s3', 'micros'],
        ['s4', 'before epoch'],
        ['s5', null],
      ]);
    }, 60_000);
  },
);
