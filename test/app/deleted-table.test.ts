/**
 * A BigQuery table deleted under the pipeline, met by new instances only (ADR-1515): the harness makes a new
 * scheduler per tick and a new reader per task, so every instance plans the tables for the first time, as
 * after a cold start. The ledger's marker tells the deleted table from a new one: the deleted one is refused
 * with an error naming it, a new one is created, and after the backfill's fresh ensure the rows flow again.
 */

import type { PipelineStatus } from '../../shared/app/ledger/status';
import { retryPartitions } from '../../shared/app/operator/partition-retry';
import type { Scheduler } from '../../shared/app/replication/scheduler/scheduler';
import { withMissingTables } from '../../shared/app/tables/table-status';
import { createLogger } from '../../shared/domain/log';
import { historyTableMissing, replicaTableMissing } from '../../shared/domain/missing-table';
import { addMillis } from '../../shared/domain/timestamp';
import type { Harness } from './support/harness';
import { ids, running } from './support/running-pipeline';
import { settle } from './support/settle';

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

describe('a table deleted under a warm scheduler', () => {
  it('is listed failing with the named error, though that scheduler does not ensure it again', async () => {
    const { h, replica } = await running();
    // One scheduler for every tick from here: it planned and ensured the tables before the deletion.
    const warm: Scheduler = h.scheduler();
    await warm.tick();
    const tableState = async () =>
      (((await h.ledger.readStatus()) as PipelineStatus | null)?.tables ?? []).find(
        (t) => t.source === 'Orders',
      );
    expect((await tableState())?.state).toBe('replicating');
    replica.dropTable('orders');
    h.script.commit(addMillis(h.now, 10), [{ table: 'Orders', id: 3, val: 'c' }]);
    for (let i = 0; i < 4; i++) {
      h.advance(6_000);
      await warm.tick();
      await h.drain();
    }
    const orders = await tableState();
    expect(orders?.state).toBe('failing');
    expect(orders?.reason).toMatch(/BigQuery table memory\.orders was not found/);
    expect(
      (((await h.ledger.readStatus()) as PipelineStatus | null)?.tables ?? []).find(
        (t) => t.source === 'Items',
      )?.state,
    ).toBe('replicating');
  });
});

describe('the status list of tables failing as missing', () => {
  const tables = [
    {
      source: 'Orders',
      replica: 'orders',
      history: 'orders_history',
      columns: 3,
      state: 'replicating' as const,
    },
    { source: 'Items', replica: 'items', history: null, columns: 2, state: 'replicating' as const },
    { source: 'Old', replica: 'old', history: null, columns: 0, state: 'dropped' as const },
  ];

  it('marks the table whose replica or history a partition error names, and no other', () => {
    const replicaError = { message: `table Items: ${replicaTableMissing('ds.items').message}` };
    const historyError = { message: historyTableMissing('ds.orders_history').message };
    const shown = withMissingTables(tables, [{ message: 'something else' }, replicaError, historyError]);
    expect(shown.map((t) => t.state)).toEqual(['failing', 'failing', 'dropped']);
    expect(shown[0]?.reason).toBe(historyError.message);
    expect(shown[1]?.reason).toBe(replicaError.message);
    // A history error does not name the replica of the same name, nor the other way round.
    const crossed = withMissingTables(tables, [{ message: historyTableMissing('ds.items').message }]);
    expect(crossed.map((t) => t.state)).toEqual(['replicating', 'replicating', 'dropped']);
    expect(withMissingTables(tables, [])).toBe(tables);
  });
});
