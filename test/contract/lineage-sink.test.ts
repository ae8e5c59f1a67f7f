/** The lineage-sink contract against memory and against the Lineage emulator through the official client. */

import { type LineageEmulator, startLineageEmulator } from '../../local/emulators/lineage/emulator';
import { DataLineageSink } from '../../shared/adapters/lineage/lineage-sink';
import { MemoryLineageSink } from '../../shared/adapters/memory/lineage-sink';
import type { RunEvent } from '../../shared/domain/lineage/open-lineage';
import { lineageSinkContract } from './lineage-sink.contract';

// The emulator's outage test waits for the client's retries to give up (the sink's total timeout below).
jest.setTimeout(20_000);

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
  // Each sink's client opens a new channel: its first call resolves and connects first, which on a loaded
  // machine took more than half a second (a 500 ms budget failed a send that had nothing wrong with it).
  const sink = new DataLineageSink(emulator.client(), 'acme-prod', `loc-${before}`, {
    totalTimeoutMs: 3_000,
  });
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
