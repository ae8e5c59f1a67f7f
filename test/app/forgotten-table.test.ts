/**
 * The ledger's evidence that a BigQuery table existed, beyond its marker (ADR-1516), and the operator's way
 * to drop it (`POST /tables/forget`, ADR-1517), through the backfill function's HTTP handler over an
 * in-memory pipeline whose every reader and scheduler is a cold start:
 *
 * - a table ensured by a version that wrote no markers (only the last status lists it) and deleted before
 *   its first ensure after the upgrade is refused, not recreated empty;
 * - a table removed on purpose is forgotten, the failed partition retried, and the table is created empty
 *   and written on; deleted again, it is refused again;
 * - bad requests are named; a warm instance re-plans a table met missing, so a forget reaches it too.
 */
import { MemoryHistorySink, MemoryReplicaSink } from '../../shared/adapters/memory/sinks';
import { TableRegistry } from '../../shared/app/tables/table-registry';
import { createLogger } from '../../shared/domain/log';
import { replicaTableMissing } from '../../shared/domain/missing-table';
import { addMillis } from '../../shared/domain/timestamp';
import { listAll } from '../../shared/ports/object-store';
import { Harness } from './support/harness';
import { call } from './support/operator-http';
import { ids, running } from './support/running-pipeline';
import { settle } from './support/settle';

const status = async (h: Harness) => JSON.stringify(await h.ledger.readStatus());
const marker = async (h: Harness, name: string) => {
  const obj = await h.store.read(`sluice/ensured/${name}`);
  return obj ? (JSON.parse(obj.data.toString('utf8')) as Record<string, unknown>) : undefined;
};

/** Deletes every table marker, as a ledger written by a version before markers has none. */
async function withoutMarkers(h: Harness): Promise<number> {
  const { items } = await listAll(h.store, 'sluice/ensured/');
  for (const o of items) await h.store.delete(o.name, o.generation);
  return items.length;
}

describe('tables the ledger knows existed', () => {
  it('a table ensured before markers existed and deleted before its first ensure is refused; forgotten, it starts anew', async () => {
    const { h, replica } = await running();
    expect(await withoutMarkers(h)).toBeGreaterThan(0);
    expect(await status(h)).toContain('"replicating"');
    replica.dropTable('orders');
    h.script.commit(addMillis(h.now, 10), [{ table: 'Orders', id: 3, val: 'c' }]);
    await settle(h);
    // The last status listed it as replicated: deleted, not new.
    expect(replica.table('orders')).toBeUndefined();
    expect(await status(h)).toMatch(/BigQuery table memory\.orders was not found/);
    // The status's evidence became a marker: the status now lists the table `failing`, which proves nothing.
    expect(await marker(h, 'replica/orders')).toEqual({ kind: 'replica', destination: 'orders' });
    expect(await status(h)).toContain('"failing"');
    // A listed table that still exists gets its marker at its first ensure after the upgrade.
    expect(await marker(h, 'replica/items')).toEqual({ kind: 'replica', destination: 'items' });
    // The operator meant it: forgetting outweighs the status list.
    const forgot = await call(h, 'POST', '/tables/forget', {
      body: { table: 'Orders', targets: ['replica'] },
    });
    expect(forgot.status).toBe(200);
    expect(forgot.json.forgotten).toEqual([{ target: 'replica', destination: 'orders', before: 'marked' }]);
    expect((await call(h, 'POST', '/partitions/retry')).json.retried).toHaveLength(1);
    await settle(h);
    expect(ids(replica.rows('orders'))).toEqual(['3']);
    expect(await marker(h, 'replica/orders')).toEqual({ kind: 'replica', destination: 'orders' });
    expect(await status(h)).not.toMatch(/was not found/);
  });

  it('a table removed on purpose: forgotten over HTTP, retried, created empty and written on; deleted again, refused again', async () => {
    const { h, replica, history } = await running();
    replica.dropTable('orders');
    history.dropTable('orders_history');
    h.script.commit(addMillis(h.now, 10), [{ table: 'Orders', id: 3, val: 'c' }]);
    await settle(h);
    expect(replica.table('orders')).toBeUndefined();
    expect(await status(h)).toMatch(/"failed":[1-9]/);
    expect(await status(h)).toMatch(/POST \/tables\/forget/);
    const forgot = await call(h, 'POST', '/tables/forget', { body: { table: 'Orders' } });
    expect(forgot.status).toBe(200);
    expect(forgot.json).toMatchObject({
      table: 'Orders',
      forgotten: [
        { target: 'replica', destination: 'orders', before: 'marked' },
        { target: 'history', destination: 'orders_history', before: 'marked' },
      ],
      next: expect.stringMatching(/POST \/partitions\/retry/),
    });
    expect(await marker(h, 'replica/orders')).toMatchObject({ forgotten: true, at: expect.any(String) });
    // Asked again, it says so and changes nothing.
    const again = await call(h, 'POST', '/tables/forget', { body: { table: 'Orders' } });
    expect(again.json.forgotten).toEqual([
      { target: 'replica', destination: 'orders', before: 'forgotten' },
      { target: 'history', destination: 'orders_history', before: 'forgotten' },
    ]);
    expect((await call(h, 'POST', '/partitions/retry')).json.retried).toHaveLength(1);
    h.script.commit(addMillis(h.now, 10), [{ table: 'Orders', id: 4, val: 'd' }]);
    await settle(h);
    // Created empty: what was in it before is not brought back (a backfill would), what came after is there.
    expect(ids(replica.rows('orders'))).toEqual(['3', '4']);
    expect(history.hasTable('orders_history')).toBe(true);
    expect(await marker(h, 'replica/orders')).toEqual({ kind: 'replica', destination: 'orders' });
    expect(await status(h)).not.toMatch(/was not found/);
    // The marker is live again: a second deletion is refused like the first.
    replica.dropTable('orders');
    h.script.commit(addMillis(h.now, 10), [{ table: 'Orders', id: 5, val: 'e' }]);
    await settle(h);
    expect(replica.table('orders')).toBeUndefined();
    expect(await status(h)).toMatch(/BigQuery table memory\.orders was not found/);
  });

  it('names each bad request', async () => {
    const { h } = await running();
    const post = (body: unknown) => call(h, 'POST', '/tables/forget', { body });
    const problems = async (body: unknown) => {
      const out = await post(body);
      expect(out.status).toBe(400);
      return (out.json.error as { problems: string[] }).problems;
    };
    expect(await problems({ table: 'Ordrs' })).toEqual([
      'table: "Ordrs" is not a table SLUICE_TABLES replicates (did you mean "Orders"?)',
    ]);
    expect(await problems({ table: 'Items', targets: ['history'] })).toEqual([
      'targets: table "Items" has no history table in SLUICE_TABLES',
    ]);
    expect(await problems({})).toEqual(['table: must be a source table name']);
    expect(await problems({ table: 'Orders', force: true })).toEqual([
      'force: unknown field (table, targets)',
    ]);
    expect((await problems({ table: 'Orders', targets: ['replica', 'replica'] }))[0]).toMatch(/^targets: /);
    expect((await problems({ table: 'Orders', targets: 'replica' }))[0]).toMatch(/^targets: /);
    expect((await problems(['Orders']))[0]).toMatch(/^body: must be a JSON object/);
    const get = await call(h, 'GET', '/tables/forget');
    expect(get.status).toBe(405);
    expect(get.headers.Allow).toBe('POST');
    // Nothing was forgotten by any of them.
    expect(await marker(h, 'replica/orders')).toEqual({ kind: 'replica', destination: 'orders' });
  });

  it('a warm instance re-plans a table met missing, so it sees the forget', async () => {
    const h = new Harness();
    const replica = new MemoryReplicaSink();
    const history = new MemoryHistorySink();
    const registry = new TableRegistry(
      { catalog: h.catalog, replica, history, ledger: h.ledger },
      h.settings.config,
      createLogger(() => undefined),
    );
    await registry.table('Orders', h.now);
    expect(replica.table('orders')).toBeDefined();
    replica.dropTable('orders');
    await h.ledger.forgetEnsured('replica', 'orders', 'now');
    // Planned before: nothing is ensured again until a write met the table missing.
    await registry.table('Orders', h.now);
    expect(replica.table('orders')).toBeUndefined();
    registry.forgetMissing(new Error('unrelated'));
    await registry.table('Orders', h.now);
    expect(replica.table('orders')).toBeUndefined();
    registry.forgetMissing(replicaTableMissing('memory.orders'));
    await registry.table('Orders', h.now);
    expect(replica.table('orders')).toBeDefined();
  });
});
