/**
 * A BigQuery table deleted under the pipeline, met by new instances only (ADR-1515): the harness makes a new
 * scheduler per tick and a new reader per task, so every instance plans the tables for the first time, as
 * after a cold start. The ledger's marker tells the deleted table from a new one: the deleted one is refused
 * with an error naming it, a new one is created, and after the backfill's fresh ensure the rows flow again.
 */
import { MemoryHistorySink, MemoryReplicaSink } from '../../shared/adapters/memory/sinks';
import { retryPartitions } from '../../shared/app/operator/partition-retry';
import { createLogger } from '../../shared/domain/log';
import { addMillis } from '../../shared/domain/timestamp';
import { Harness, T0 } from './support/harness';

async function settle(h: Harness, rounds = 4) {
  for (let i = 0; i < rounds; i++) {
    h.advance(6_000);
    await h.tick();
    await h.drain();
  }
}

const ids = (rows: Array<Record<string, unknown>>) => rows.map((r) => String(r.Id)).sort();

async function running() {
  const replica = new MemoryReplicaSink();
  const history = new MemoryHistorySink();
  const h = new Harness({ replicaSink: replica, historySink: history });
  h.script.commit(addMillis(T0, 100), [
    { table: 'Orders', id: 1, val: 'a' },
    { table: 'Items', id: 2, val: 'b' },
  ]);
  h.now = addMillis(T0, 1_000);
  await settle(h);
  expect(ids(replica.rows('orders'))).toEqual(['1']);
  return { h, replica, history };
}

async function statusText(h: Harness): Promise<string> {
  return JSON.stringify(await h.ledger.readStatus());
}

describe('a table deleted under the pipeline, after a cold start', () => {
  it('refuses a deleted replica table, creates a new one, and flows again after the backfill', async () => {
    const { h, replica } = await running();
    replica.dropTable('orders');
    h.script.commit(addMillis(h.now, 10), [{ table: 'Orders', id: 3, val: 'c' }]);
    await settle(h);
    // Not recreated empty: the table stays missing and the status names it and the repair.
    expect(replica.table('orders')).toBeUndefined();
    const status = await statusText(h);
    expect(status).toMatch(/BigQuery table memory\.orders was not found/);
    expect(status).toContain('\\"targets\\": [\\"replica\\"]');
    expect(status).toMatch(/"failed":[1-9]/);
    expect(h.events('table.failing').length).toBeGreaterThan(0);
    // A table newly added to SLUICE_TABLES has no marker: it is created (by the tick that plans it).
    h.reconfigure({
      tables: {
        Orders: { replica: 'orders', history: 'orders_history' },
        Items: { replica: 'items' },
        Payments: { replica: 'payments' },
      },
    });
    h.catalog.tables.push('Payments');
    h.script.commit(addMillis(h.now, 10), [{ table: 'Payments', id: 2, val: 'p' }]);
    await settle(h);
    expect(replica.table('payments')).toBeDefined();
    // The backfill ensures fresh (recreating the table); then the retried partition writes on.
    const schema = await h.catalog.tableSchema('Orders');
    await replica.ensureTable('orders', schema, 'all', { fresh: true });
    const retried = await retryPartitions(
      h.ledger,
      createLogger(() => undefined),
      {},
    );
    expect(retried.retried.length).toBeGreaterThan(0);
    await settle(h);
    expect(ids(replica.rows('orders'))).toContain('3');
    expect(ids(replica.rows('payments'))).toEqual(['2']);
    expect(await statusText(h)).not.toMatch(/was not found/);
  });

  it('refuses a deleted history table instead of recreating it empty', async () => {
    const { h, history } = await running();
    history.dropTable('orders_history');
    h.script.commit(addMillis(h.now, 10), [{ table: 'Orders', id: 3, val: 'c' }]);
    await settle(h);
    expect(history.hasTable('orders_history')).toBe(false);
    expect(await statusText(h)).toMatch(/BigQuery history table memory\.orders_history was not found/);
  });
});
