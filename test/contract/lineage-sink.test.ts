/** The lineage-sink contract against memory and against the Lineage emulator through the official client. */

import { type LineageEmulator, startLineageEmulator } from '../../local/emulators/lineage/emulator';
import { DataLineageSink } from '../../shared/adapters/lineage/lineage-sink';
import { MemoryLineageSink } from '../../shared/adapters/memory/lineage-sink';
import type { RunEvent } from '../../shared/domain/lineage/open-lineage';
import { lineageSinkContract } from './lineage-sink.contract';

lineageSinkContract('in-memory', async () => {
  const sink = new MemoryLineageSink();
  return {
    sink,
    received: async () => sink.events,
    down: async () => sink.failNext(Number.POSITIVE_INFINITY),
    up: async () => sink.recover(),
  };
});

let emulator: LineageEmulator;
beforeAll(async () => {
  emulator = await startLineageEmulator();
});
afterAll(async () => {
  await emulator.stop();
});

lineageSinkContract('Data Lineage API (emulator)', async () => {
  const before = emulator.admin.events().length;
  const sink = new DataLineageSink(emulator.client(), 'acme-prod', `loc-${before}`, { totalTimeoutMs: 500 });
  return {
    sink,
    received: async () =>
      emulator.admin
        .events()
        .slice(before)
        .map((e) => e.openLineage as unknown as RunEvent),
    // Every attempt fails, the client's own retries included, until the outage ends.
    down: async () => {
      emulator.admin.fail({
        method: 'ProcessOpenLineageRunEvent',
        times: Number.POSITIVE_INFINITY,
        code: 14,
      });
    },
    up: async () => emulator.admin.clearFaults(),
  };
});
