import { FlakyStore } from './support/flaky-store';
import { Harness } from './support/harness';
import { scriptChanges } from './support/random-changes';
import { prng } from './support/script';
import { settle } from './support/settle';

async function simulate(seed: number, faults: boolean) {
  const store = new FlakyStore();
  const h = new Harness({ roots: 2, store });
  const rnd = prng(seed);
  // Odd seeds: the stream reports each child of a split in its own child-partitions record, as the service may.
  h.script.childRecordEach = seed % 2 === 1;
  let at = h.script.t0;
  for (let step = 0; step < 40; step++) {
    // Script the next few seconds, never beyond "now".
    at = scriptChanges(h, rnd, at, {
      maxGapMs: 400,
      maxLive: 6,
      maxMods: 4,
      ordersShare: 0.6,
      ids: 40,
      nullShare: 0.2,
    });
    if (faults) {
      const f = rnd();
      if (f < 0.1) h.replica.faults.fail(1);
      else if (f < 0.2) h.history.faults.fail(1, 8);
      else if (f < 0.3) h.script.fault = { after: Math.floor(rnd() * 5), code: 14 };
      else if (f < 0.4 && h.queue.pending.length > 0) h.queue.pending.push({ ...h.queue.pending[0]! });
      else if (f < 0.5) store.loseNextWriteResponse = true;
      else if (f < 0.6) store.errors = [503, 429];
    }
    await h.tick();
    if (rnd() < 0.3) await h.tick(); // a second, concurrent-looking tick
    await h.drain();
    h.advance(Math.floor(rnd() * 6_000));
  }
  // Catch up: no more changes; tick and drain until every partition is at now.
  await settle(h, 10);
  return h;
}

describe('randomized replication', () => {
  for (const [seed, faults] of [
    [1, false],
    [7, true],
    [42, true],
  ] as const) {
    it(`seed ${seed}${faults ? ' with faults' : ''}: replica equals source, history holds every mod`, async () => {
      const h = await simulate(seed, faults);
      const splits = [...h.script.parts.values()].filter((p) => p.children.length > 0).length;
      expect(splits).toBeGreaterThan(0);
      const merges = [...h.script.parts.values()].filter((p) => p.parents.length > 1).length;
      expect(merges).toBeGreaterThan(0);
      if (faults) expect(h.outcomes.some((o) => o.status === 503)).toBe(true);
      expect(h.script.mods).toBeGreaterThan(100);
      expect(h.replica.rows('orders')).toEqual(h.expected('Orders'));
      expect(h.replica.rows('items')).toEqual(h.expected('Items'));
      const orderMods = [...h.script.parts.values()]
        .flatMap((p) => p.records)
        .filter((r) => r.tableName === 'Orders')
        .reduce((n, r) => n + r.mods.length, 0);
      expect(h.history.distinct('orders_history')).toBe(orderMods);
      expect(h.history.rows('orders_history')).toHaveLength(orderMods);
      const status = (await h.tick()).status!;
      expect(status.partitions.failed).toBe(0);
      expect(status.lastErrors).toEqual([]);
      // Caught up: the watermark is within a window of now.
      expect(status.lagSeconds).toBeLessThan(10);
    });
  }
});
