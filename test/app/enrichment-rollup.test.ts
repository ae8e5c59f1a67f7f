/**
 * Folding retired counter objects into the rollup (ADR-1806): the status sum is the same before and after a
 * fold, after a crash between the rollup write and the deletes, with two schedulers folding at once, with a
 * listing older than the fold, and when a folded instance writes again.
 */
import { MemoryObjectStore } from '../../shared/adapters/memory/object-store';
import type { EnrichmentStats } from '../../shared/app/enrichment/apply';
import { EnrichmentCounters } from '../../shared/app/enrichment/counters';
import {
  type CounterObject,
  foldAndSum,
  GONE_GRACE_MS,
  rollupName,
} from '../../shared/app/enrichment/rollup';
import { parseCounters } from '../../shared/app/enrichment/totals';
import type { WriteOutcome } from '../../shared/ports/object-store';

const HOUR = 3_600_000;

const stats = (rows: number, hits = 0): EnrichmentStats => ({
  'Orders.lookups[0]': {
    dimension: 'Customers',
    mode: 'latest',
    rows,
    reads: rows * 2,
    retries: 0,
    missing: rows,
    unresolved: 0,
    cache: { hits, misses: 1, evictions: 0, size: 1 },
  },
});

/** A memory store whose deletes can fail (the scheduler "dies" after writing the rollup) or run a hook first. */
class CrashingStore extends MemoryObjectStore {
  failDeletes = false;
  beforeDelete: (() => Promise<void>) | undefined;
  override async delete(name: string, generation: string): Promise<WriteOutcome> {
    if (this.failDeletes) throw new Error('process ended');
    const hook = this.beforeDelete;
    this.beforeDelete = undefined;
    await hook?.();
    return super.delete(name, generation);
  }
}

/** The scheduler's view: its clock is an hour ahead, so every object written so far is retired. */
function scheduler(store: MemoryObjectStore, ahead = 2 * HOUR): EnrichmentCounters {
  return new EnrichmentCounters(store, 'p', { instance: 'scheduler', now: () => Date.now() + ahead });
}

async function instances(
  store: MemoryObjectStore,
  counts: Record<string, number>,
): Promise<EnrichmentCounters[]> {
  const out: EnrichmentCounters[] = [];
  for (const [instance, rows] of Object.entries(counts)) {
    const c = new EnrichmentCounters(store, 'p', { instance, intervalMs: 0 });
    await c.publish(() => stats(rows, rows));
    out.push(c);
  }
  return out;
}

const names = async (store: MemoryObjectStore) =>
  (await store.list('p/enrichment/')).items.map((i) => i.name);
const rowsOf = (t: { lookups: Record<string, { rows: number }> }) => t.lookups['Orders.lookups[0]']?.rows;

describe('enrichment counter folding', () => {
  it('folds retired objects into the rollup, deletes them after it, and keeps the sum', async () => {
    const store = new MemoryObjectStore();
    await instances(store, { a: 1, b: 2, c: 4 });
    const live = await new EnrichmentCounters(store, 'p').totals();
    expect(live).toMatchObject({ instances: 3, folded: 0 });
    const folded = await scheduler(store).totals();
    expect({ ...folded, calls: 0 }).toEqual({ ...live, calls: 0, folded: 3 });
    expect(folded.lookups['Orders.lookups[0]']).toMatchObject({
      rows: 7,
      reads: 14,
      cacheHits: 7,
      cacheMisses: 3,
    });
    expect(await names(store)).toEqual([]);
    // Later ticks: the records are kept a grace period, then dropped; the sum never moves.
    expect(await scheduler(store).totals()).toMatchObject({ instances: 3, folded: 0, lookups: live.lookups });
    const late = await scheduler(store, 2 * HOUR + GONE_GRACE_MS + 1000).totals();
    expect(late).toMatchObject({ instances: 3, lookups: live.lookups });
    const rollup = JSON.parse((await store.read(rollupName('p')))!.data.toString());
    expect(rollup.folded).toEqual({});
  });

  it('folds only objects older than the retirement age', async () => {
    const store = new MemoryObjectStore();
    await instances(store, { old: 1 });
    const oldAt = Date.parse((await store.read('p/enrichment/old.json'))!.updated);
    while (Date.now() <= oldAt) await new Promise((r) => setTimeout(r, 1));
    await instances(store, { young: 2 });
    const youngAt = Date.parse((await store.read('p/enrichment/young.json'))!.updated);
    const s = new EnrichmentCounters(store, 'p', { retireAfterMs: HOUR, now: () => youngAt + HOUR });
    expect(await s.totals()).toMatchObject({ instances: 2, folded: 1 });
    expect(await names(store)).toEqual(['p/enrichment/young.json']);
    expect(rowsOf(await s.totals())).toBe(3);
  });

  it('counts nothing twice after a crash between the rollup write and the deletes', async () => {
    const store = new CrashingStore();
    await instances(store, { a: 1, b: 2 });
    store.failDeletes = true;
    const crashed = await scheduler(store).totals();
    expect(rowsOf(crashed)).toBe(3);
    expect(await names(store)).toEqual(['p/enrichment/a.json', 'p/enrichment/b.json']);
    expect(await store.read(rollupName('p'))).toBeDefined();
    store.failDeletes = false;
    const writes = store.calls.write;
    const next = await scheduler(store).totals();
    expect(next).toMatchObject({ instances: 2, folded: 2 });
    expect(rowsOf(next)).toBe(3);
    expect(store.calls.write).toBe(writes); // The rollup already held them: only the deletes were left.
    expect(await names(store)).toEqual([]);
  });

  it('counts nothing when the rollup write fails, and folds on the next tick', async () => {
    const store = new MemoryObjectStore();
    await instances(store, { a: 5 });
    const failing = Object.assign(Object.create(store), {
      write: async () => {
        throw new Error('HTTP 503');
      },
    }) as MemoryObjectStore;
    await expect(scheduler(failing).totals()).rejects.toThrow('HTTP 503');
    expect(await names(store)).toEqual(['p/enrichment/a.json']);
    expect(rowsOf(await scheduler(store).totals())).toBe(5);
  });

  it('two schedulers folding at once count each instance once', async () => {
    const store = new MemoryObjectStore();
    await instances(store, { a: 1, b: 2, c: 4 });
    // Both read the rollup before either writes it: one write wins, the other re-reads and re-plans.
    let waiting: (() => void)[] = [];
    const read = store.read.bind(store);
    store.read = async (name) => {
      const out = await read(name);
      if (name === rollupName('p') && waiting !== undefined) {
        await new Promise<void>((r) => {
          waiting.push(r);
          if (waiting.length === 2) for (const w of waiting) w();
        });
        waiting = undefined as unknown as (() => void)[];
      }
      return out;
    };
    const outcomes: boolean[] = [];
    const write = store.write.bind(store);
    store.write = async (name, data, options) => {
      const out = await write(name, data, options);
      if (name === rollupName('p')) outcomes.push(out.ok);
      return out;
    };
    const [x, y] = await Promise.all([scheduler(store).totals(), scheduler(store).totals()]);
    expect(outcomes).toEqual([true, false]); // The loser re-planned over the winner's records: nothing to add.
    expect([rowsOf(x), rowsOf(y)]).toEqual([7, 7]);
    expect([x.instances, y.instances]).toEqual([3, 3]);
    expect(await names(store)).toEqual([]);
    const after = await scheduler(store).totals();
    expect(after).toMatchObject({ instances: 3 });
    expect(rowsOf(after)).toBe(7);
  });

  it('a listing taken before another scheduler folded still sums right', async () => {
    const store = new MemoryObjectStore();
    await instances(store, { a: 1, b: 2 });
    const stale: CounterObject[] = (await store.list('p/enrichment/')).items.map((info) => ({
      info,
      lookups: parseCounters(info.metadata['sluice-enrichment'])!,
    }));
    await scheduler(store).totals();
    await scheduler(store).totals(); // Marks the deleted objects gone.
    const sum = await foldAndSum(
      store,
      'p',
      stale,
      { now: Date.now() + 2 * HOUR, retireAfterMs: HOUR },
      () => {},
    );
    expect(sum.lookups['Orders.lookups[0]']?.rows).toBe(3);
    expect(sum.instances).toBe(2);
  });

  it('an instance that writes again after its object was folded adds only what came after', async () => {
    const store = new MemoryObjectStore();
    const [a] = await instances(store, { a: 3, b: 1 });
    expect(rowsOf(await scheduler(store).totals())).toBe(4);
    expect(await names(store)).toEqual([]);
    await a!.publish(() => stats(10, 10)); // Cumulative: 7 more rows since the fold.
    expect(a!.name).toBe('p/enrichment/a.1.json');
    expect((await store.read('p/enrichment/a.1.json'))?.metadata['sluice-enrichment']).toContain('"rows":7');
    expect(rowsOf(await new EnrichmentCounters(store, 'p').totals())).toBe(11);
    expect(rowsOf(await scheduler(store).totals())).toBe(11);
    await a!.publish(() => stats(12, 12));
    const t = await scheduler(store).totals();
    expect(t.lookups['Orders.lookups[0]']).toMatchObject({ rows: 13, cacheHits: 13, cacheMisses: 2 });
  });

  it('an instance that writes again long after its record was dropped is still counted once', async () => {
    const store = new MemoryObjectStore();
    const [a] = await instances(store, { a: 3, b: 1 });
    await scheduler(store).totals();
    await scheduler(store).totals(); // Marks the records gone,
    await scheduler(store, 2 * HOUR + GONE_GRACE_MS + 1000).totals(); // then drops them.
    expect(JSON.parse((await store.read(rollupName('p')))!.data.toString()).folded).toEqual({});
    await a!.publish(() => stats(10, 10));
    expect(rowsOf(await new EnrichmentCounters(store, 'p').totals())).toBe(11);
  });

  it('an instance that writes between the fold and the delete adds only its delta', async () => {
    const store = new CrashingStore();
    const [a] = await instances(store, { a: 3 });
    store.beforeDelete = () => a!.publish(() => stats(8));
    expect(rowsOf(await scheduler(store).totals())).toBe(3); // As of the listing; the delete lost its race.
    expect(await names(store)).toEqual(['p/enrichment/a.json']);
    expect(rowsOf(await new EnrichmentCounters(store, 'p').totals())).toBe(8);
    expect(rowsOf(await scheduler(store).totals())).toBe(8); // Folds the 5 above the record, once.
    expect(rowsOf(await scheduler(store).totals())).toBe(8);
    expect(await names(store)).toEqual([]);
  });

  it('refuses a malformed rollup, naming it, and deletes nothing', async () => {
    const store = new MemoryObjectStore();
    await instances(store, { a: 1 });
    await store.write(rollupName('p'), Buffer.from('{"version":2}'), { ifGeneration: 0 });
    await expect(scheduler(store).totals()).rejects.toThrow(
      'p/enrichment-rollup.json: not an enrichment rollup',
    );
    expect(await names(store)).toEqual(['p/enrichment/a.json']);
  });
});
