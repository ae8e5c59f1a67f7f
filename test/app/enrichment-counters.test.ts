/**
 * The lookups' counters across instances: each instance publishes its own object's metadata (throttled, a
 * repeated publish of unchanged counters writes nothing), the scheduler sums every instance from a listing.
 */
import { MemoryObjectStore } from '../../shared/adapters/memory/object-store';
import type { EnrichmentStats } from '../../shared/app/enrichment/apply';
import { EnrichmentCounters } from '../../shared/app/enrichment/counters';
import { countEnrichment } from '../../shared/app/replication/scheduler/status-errors';

const stats = (missing: number, hits: number): EnrichmentStats => ({
  'Orders.lookups[0]': {
    dimension: 'Customers',
    mode: 'latest',
    rows: 10,
    reads: 2,
    retries: 1,
    missing,
    unresolved: 0,
    cache: { hits, misses: 3, evictions: 0, size: 3 },
  },
});

describe('enrichment counters', () => {
  it('sums every instance from one listing; unchanged counters are not written again', async () => {
    const store = new MemoryObjectStore();
    const a = new EnrichmentCounters(store, 'p', { instance: 'a', intervalMs: 0 });
    const b = new EnrichmentCounters(store, 'p', { instance: 'b', intervalMs: 0 });
    await a.publish(() => stats(1, 5));
    await a.publish(() => stats(2, 6));
    await b.publish(() => stats(3, 7));
    const generation = (await store.read('p/enrichment/b.json'))?.generation;
    await b.publish(() => stats(3, 7));
    expect((await store.read('p/enrichment/b.json'))?.generation).toBe(generation);
    const totals = await a.totals();
    expect(totals).toEqual({
      instances: 2,
      calls: 1,
      folded: 0,
      lookups: {
        'Orders.lookups[0]': {
          dimension: 'Customers',
          mode: 'latest',
          rows: 20,
          reads: 4,
          retries: 2,
          missing: 5,
          unresolved: 0,
          cacheHits: 13,
          cacheMisses: 6,
        },
      },
    });
  });

  it('publishes a change inside the interval once the interval has passed', async () => {
    const store = new MemoryObjectStore();
    const a = new EnrichmentCounters(store, 'p', { instance: 'a', intervalMs: 50 });
    await a.publish(() => stats(1, 0));
    let current = stats(2, 0);
    await a.publish(() => current);
    current = stats(4, 0);
    expect((await a.totals()).lookups['Orders.lookups[0]']?.missing).toBe(1);
    for (let i = 0; i < 100 && (await a.totals()).lookups['Orders.lookups[0]']?.missing !== 4; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect((await a.totals()).lookups['Orders.lookups[0]']?.missing).toBe(4);
  });

  it('is counted in the status only when a table has lookups', async () => {
    const store = new MemoryObjectStore();
    const a = new EnrichmentCounters(store, 'p', { instance: 'a', intervalMs: 0 });
    await a.publish(() => stats(1, 0));
    const none = { tables: { Orders: { history: 'h' } } };
    const some = {
      tables: {
        Orders: { history: 'h', lookups: [{ table: 'C', key: {}, columns: ['x'], mode: 'latest' as const }] },
      },
    };
    expect(await countEnrichment(a, none, () => {})).toBeUndefined();
    expect((await countEnrichment(a, some, () => {}))?.lookups['Orders.lookups[0]']?.missing).toBe(1);
  });

  it('the status adds the rollup to the live objects; a malformed rollup is a permanent status error', async () => {
    const store = new MemoryObjectStore();
    await new EnrichmentCounters(store, 'p', { instance: 'old', intervalMs: 0 }).publish(() => stats(1, 0));
    const some = {
      tables: {
        Orders: { history: 'h', lookups: [{ table: 'C', key: {}, columns: ['x'], mode: 'latest' as const }] },
      },
    };
    const later = new EnrichmentCounters(store, 'p', { now: () => Date.now() + 2 * 3_600_000 });
    expect((await countEnrichment(later, some, () => {}))?.folded).toBe(1);
    await new EnrichmentCounters(store, 'p', { instance: 'new', intervalMs: 0 }).publish(() => stats(2, 0));
    const now = new EnrichmentCounters(store, 'p');
    expect(await countEnrichment(now, some, () => {})).toMatchObject({
      instances: 2,
      calls: 1,
      lookups: { 'Orders.lookups[0]': { missing: 3 } },
    });
    await store.write('p/enrichment-rollup.json', Buffer.from('not json'), {
      ifGeneration: (await store.read('p/enrichment-rollup.json'))!.generation,
    });
    const errors: unknown[] = [];
    expect(await countEnrichment(now, some, (e) => errors.push(e))).toBeUndefined();
    expect(errors).toEqual([expect.objectContaining({ kind: 'permanent' })]);
    expect(String(errors[0])).toContain('p/enrichment-rollup.json: not an enrichment rollup');
  });
});
