/**
 * The ledger's evidence of BigQuery tables (ADR-1515, ADR-1516, ADR-1517): markers, the last status's table
 * list for tables ensured before markers, `forgotten` markers, and a marker that cannot be read.
 */
import { MemoryObjectStore } from '../../shared/adapters/memory/object-store';
import { LedgerStore } from '../../shared/app/ledger/ledger-store';
import { createLogger } from '../../shared/domain/log';

function setup() {
  const store = new MemoryObjectStore();
  const ledger = new LedgerStore(
    store,
    'p1',
    createLogger(() => undefined),
  );
  const status = (tables: unknown[]) =>
    store.write('p1/status.json', Buffer.from(JSON.stringify({ tables })), { ifGeneration: 0 });
  const body = async (name: string) => (await store.read(`p1/ensured/${name}`))?.data.toString('utf8');
  return { store, ledger, status, body };
}

describe('table evidence', () => {
  it('a marker, a listing in the last status (replicating or dropped, not failing), or nothing', async () => {
    const { ledger, status } = setup();
    expect(await ledger.wasEnsured('replica', 'orders')).toBe('none');
    await status([
      { source: 'Orders', replica: 'orders', history: 'orders_history', state: 'replicating' },
      { source: 'Gone', replica: 'gone', history: null, state: 'dropped' },
      { source: 'Bad', replica: 'bad', history: null, state: 'failing' },
    ]);
    expect(await ledger.wasEnsured('replica', 'orders')).toBe('listed');
    expect(await ledger.wasEnsured('history', 'orders_history')).toBe('listed');
    expect(await ledger.wasEnsured('replica', 'orders_history')).toBe('none');
    expect(await ledger.wasEnsured('replica', 'gone')).toBe('listed');
    expect(await ledger.wasEnsured('replica', 'bad')).toBe('none');
    await ledger.markEnsured('replica', 'bad');
    expect(await ledger.wasEnsured('replica', 'bad')).toBe('marked');
  });

  it('forgetting outweighs a marker and a listing; the next mark replaces it; nothing known writes nothing', async () => {
    const { ledger, status, body, store } = setup();
    await status([{ source: 'Orders', replica: 'orders', history: null, state: 'replicating' }]);
    expect(await ledger.forgetEnsured('replica', 'orders', '2026-01-01T00:00:00Z')).toBe('listed');
    expect(await ledger.wasEnsured('replica', 'orders')).toBe('forgotten');
    expect(JSON.parse((await body('replica/orders'))!)).toEqual({
      kind: 'replica',
      destination: 'orders',
      forgotten: true,
      at: '2026-01-01T00:00:00Z',
    });
    expect(await ledger.forgetEnsured('replica', 'orders', 'later')).toBe('forgotten');
    await ledger.markEnsured('replica', 'orders');
    expect(await ledger.wasEnsured('replica', 'orders')).toBe('marked');
    expect(await ledger.forgetEnsured('replica', 'orders', 'again')).toBe('marked');
    expect(await ledger.wasEnsured('replica', 'orders')).toBe('forgotten');
    expect(await ledger.forgetEnsured('history', 'never', 'now')).toBe('none');
    expect((await store.list('p1/ensured/history/')).items).toEqual([]);
  });

  it('a marker that cannot be read counts as evidence: refusing is safer than recreating empty', async () => {
    const { ledger, store } = setup();
    await store.write('p1/ensured/replica/orders', Buffer.from('{not json'), { ifGeneration: 0 });
    expect(await ledger.wasEnsured('replica', 'orders')).toBe('marked');
  });
});
