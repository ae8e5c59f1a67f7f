/**
 * Two source tables the rules send to one BigQuery table — a named schema's `sales.Orders` (→ `sales__orders`)
 * and a plain table named `sales__orders` — are refused naming both, at every entry point (ADR-1405): the
 * startup validation, the tick's table sync (`failing` in the status) and a reader's first sight of the
 * table; a plain `Orders` beside `sales.Orders` goes to two tables and is accepted.
 */

import { validateStream } from '../../shared/app/replication/scheduler/stream-validation';
import { TableRegistry } from '../../shared/app/tables/table-registry';
import { syncTables } from '../../shared/app/tables/table-status';
import { parseConfigObject } from '../../shared/domain/config';
import { createLogger } from '../../shared/domain/log';
import { fromNanos } from '../../shared/domain/timestamp';
import { MemoryHistory, MemoryReplica, ScriptCatalog } from './support/ports';
import { ScriptedStream } from './support/script';

const CLASH =
  'tables sales.Orders and sales__orders would both write the replica table sales__orders: give one of them an explicit entry with another name in SLUICE_TABLES, or exclude it ("sales.Orders": false)';

function setup(tables: string[]) {
  const catalog = new ScriptCatalog(new ScriptedStream(fromNanos(1_000n)));
  catalog.tables = tables;
  const config = parseConfigObject({
    project: 'test-project',
    spanner: { instance: 'inst', database: 'db', stream: 'S' },
    bigquery: { dataset: 'ds' },
    ledger: { bucket: 'bucket' },
    tables: { '*': { replica: true } },
  });
  const replica = new MemoryReplica();
  const log = createLogger(() => {});
  const registry = new TableRegistry({ catalog, replica, history: new MemoryHistory() }, config, log);
  return { catalog, config, replica, registry, log };
}

test('startup validation lists the clash, naming both tables and the fix', async () => {
  const s = setup(['Orders', 'sales.Orders', 'sales__orders']);
  await expect(validateStream(s.catalog, s.config)).rejects.toThrow(CLASH);
  await expect(validateStream(setup(['Orders', 'sales.Orders']).catalog, s.config)).resolves.toBeDefined();
});

test('a reader meeting either table refuses it permanently and ensures no BigQuery table', async () => {
  const s = setup(['Orders', 'sales.Orders', 'sales__orders']);
  await expect(s.registry.table('sales.Orders', fromNanos(2_000n))).rejects.toMatchObject({
    kind: 'permanent',
    message: CLASH,
  });
  await expect(s.registry.table('sales__orders', fromNanos(2_000n))).rejects.toThrow(CLASH);
  const plain = await s.registry.table('Orders', fromNanos(2_000n));
  expect(plain?.targets).toEqual({ replica: 'orders' });
  expect(s.replica.ensured).toEqual(['orders']);
});

test('the tick lists both tables as failing with the clash and keeps the others replicating', async () => {
  const s = setup(['Orders', 'sales.Orders', 'sales__orders']);
  const tables = await syncTables({
    catalog: s.catalog,
    registry: s.registry,
    config: s.config,
    scope: { all: true, tables: new Map() },
    previous: [],
    log: s.log,
  });
  expect(tables.map((t) => [t.source, t.replica, t.state, t.reason ?? null])).toEqual([
    ['Orders', 'orders', 'replicating', null],
    ['sales.Orders', 'sales__orders', 'failing', CLASH],
    ['sales__orders', 'sales__orders', 'failing', CLASH],
  ]);
});

test('a PostgreSQL entry public.t is refused at startup with the name records give the table', async () => {
  const s = setup(['orders']);
  s.catalog.dialect = async () => 'POSTGRESQL' as never;
  const config = { ...s.config, tables: { 'public.orders': { replica: 'orders' } } };
  await expect(validateStream(s.catalog, config)).rejects.toThrow(
    `SLUICE_TABLES names public.orders: tables of PostgreSQL's default schema are named without "public." — write "orders"`,
  );
});
