/** The lookups' counters published as object metadata and summed from a listing, on the Cloud Storage emulator. */
process.env.METADATA_SERVER_DETECTION = 'none';
delete process.env.STORAGE_EMULATOR_HOST;

import { type GcsEmulator, startGcsEmulator } from '../../local/emulators/gcs/emulator';
import { GcsObjectStore } from '../../shared/adapters/gcs/object-store';
import { EnrichmentCounters } from '../../shared/app/enrichment/counters';
import { createLogger } from '../../shared/domain/log';

let gcs: GcsEmulator;
beforeAll(async () => {
  gcs = await startGcsEmulator({ port: 0 });
});
afterAll(async () => {
  await gcs?.stop();
});

it('publishes each instance as metadata and sums them from one listing', async () => {
  gcs.admin.createBucket('ledger');
  const store = new GcsObjectStore(gcs.storage().bucket('ledger'));
  const lines: string[] = [];
  const log = createLogger((l) => lines.push(l), {}, 'DEBUG');
  const stats = {
    'Orders.lookups[0]': {
      dimension: 'Customers',
      mode: 'as-of-commit',
      rows: 3,
      reads: 2,
      retries: 0,
      missing: 1,
      unresolved: 0,
      cache: null,
    },
  };
  for (const instance of ['a', 'b']) {
    const c = new EnrichmentCounters(store, 'p', { instance, intervalMs: 0, log });
    await c.publish(() => stats);
    await c.publish(() => ({ ...stats, 'Orders.lookups[0]': { ...stats['Orders.lookups[0]'], missing: 2 } }));
  }
  expect(lines).toEqual([]);
  const totals = await new EnrichmentCounters(store, 'p').totals();
  expect(totals.instances).toBe(2);
  expect(totals.lookups['Orders.lookups[0]']).toMatchObject({ rows: 6, missing: 4 });
});

it('folds retired objects into the rollup through the emulator, surviving a failed delete', async () => {
  gcs.admin.createBucket('fold');
  const store = new GcsObjectStore(gcs.storage().bucket('fold'));
  const stats = (rows: number) => ({
    'Orders.lookups[0]': {
      dimension: 'Customers',
      mode: 'latest',
      rows,
      reads: rows,
      retries: 0,
      missing: 0,
      unresolved: 0,
      cache: { hits: rows, misses: 1, evictions: 0, size: 1 },
    },
  });
  const a = new EnrichmentCounters(store, 'p', { instance: 'a', intervalMs: 0 });
  const b = new EnrichmentCounters(store, 'p', { instance: 'b', intervalMs: 0 });
  await a.publish(() => stats(2));
  await b.publish(() => stats(5));
  const lines: string[] = [];
  const scheduler = new EnrichmentCounters(store, 'p', {
    log: createLogger((l) => lines.push(l), {}, 'DEBUG'),
    now: () => Date.now() + 2 * 3_600_000,
  });
  // The scheduler writes the rollup, then every delete fails: the objects stay, and count once.
  const fault = gcs.admin.fail({ method: 'objects.delete', times: Number.POSITIVE_INFINITY, code: 403 });
  const crashed = await scheduler.totals();
  expect(crashed.lookups['Orders.lookups[0]']).toMatchObject({ rows: 7, cacheHits: 7 });
  expect(lines.filter((l) => l.includes('enrichment.counters-undeleted'))).toHaveLength(2);
  const listed = async () => (await store.list('p/enrichment/')).items.map((i) => i.name);
  expect(await listed()).toEqual(['p/enrichment/a.json', 'p/enrichment/b.json']);
  gcs.admin.clearFaults(fault);
  expect((await scheduler.totals()).lookups['Orders.lookups[0]']?.rows).toBe(7);
  expect(await listed()).toEqual([]);
  // A folded instance writing again publishes under a fresh name only what came after the fold.
  await a.publish(() => stats(6));
  expect(await listed()).toEqual(['p/enrichment/a.1.json']);
  const after = await new EnrichmentCounters(store, 'p').totals();
  expect(after).toMatchObject({ instances: 3 });
  expect(after.lookups['Orders.lookups[0]']?.rows).toBe(11);
});
