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
