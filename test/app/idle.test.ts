/**
 * Idle cost in scheduled mode (ADR-1201): a quiet pipeline writes the ledger about once per quiet-checkpoint
 * interval per partition, backs off to the capped idle delay, and still replicates a change that arrives after
 * a quiet stretch within that cap.
 */
import { addMillis, diffMillis } from '../../shared/domain/timestamp';
import { Harness, T0 } from './support/harness';

const MINUTE = 60_000;

/** A pipeline with one commit replicated, then the clock at the start of a quiet stretch. */
async function caughtUp(options: { maxDelayMs?: number; checkpointMs?: number } = {}) {
  // Windows as long as production's default (10 min): a shorter window.maxMs also bounds the quiet interval.
  const h = new Harness({ config: { leaseMs: 600_000, window: { maxMs: 600_000, longPollMs: 1_000 } } });
  if (options.maxDelayMs !== undefined) h.settings.idleMaxDelayMs = options.maxDelayMs;
  if (options.checkpointMs !== undefined) h.settings.quietCheckpointMs = options.checkpointMs;
  h.script.commit(addMillis(T0, 100), [{ table: 'Orders', id: 1, val: 'a' }]);
  h.now = addMillis(T0, 1_000);
  await h.tick();
  await h.drain();
  expect(h.replica.rows('orders')).toEqual(h.expected('Orders'));
  return h;
}

/** Runs the pipeline for `ms` in 1 s steps, ticking once a minute; returns the ledger writes of the readers. */
async function run(h: Harness, ms: number): Promise<{ writes: number; windows: number }> {
  const before = { writes: h.memStore.calls.write, outcomes: h.outcomes.length };
  let ticks = 0;
  for (let t = 0; t < ms; t += 1_000) {
    h.advance(1_000);
    if (t % MINUTE === 0) {
      await h.tick();
      ticks++;
    }
    await h.drain();
  }
  const windows = h.outcomes.slice(before.outcomes).filter((o) => o.outcome === 'window').length;
  // Each tick writes the status object once; everything else is a reader's.
  return { writes: h.memStore.calls.write - before.writes - ticks, windows };
}

describe('idle cost in scheduled mode', () => {
  it('a quiet pipeline writes about once per partition per quiet-checkpoint interval and backs off', async () => {
    const h = await caughtUp({ maxDelayMs: 40_000, checkpointMs: 2 * MINUTE });
    const quiet = await run(h, 20 * MINUTE);
    // 2 partitions, 20 min, checkpoint at most every 2 min (+ one partial round): ≤ 2 × 11 writes.
    expect(quiet.writes).toBeLessThanOrEqual(22);
    expect(quiet.writes).toBeGreaterThanOrEqual(2 * 5);
    // Back-off: windows every ~40 s rather than every 5 s (2 × 240 at the base delay).
    expect(quiet.windows).toBeLessThanOrEqual(2 * 40);
    // The watermark still moves: every partition's position is within checkpoint + cap of now.
    for (const p of (await h.ledger.listPartitions()).partitions) {
      expect(diffMillis(h.now, p.view.position)).toBeLessThanOrEqual(2 * MINUTE + 40_000 + 1_000);
    }
    expect(h.events('reader.quiet').length).toBeGreaterThan(0);
  });

  it('without back-off or quiet interval every quiet window costs one write (half of the leased two)', async () => {
    const legacy = await caughtUp();
    const before = await run(legacy, 5 * MINUTE);
    // No back-off, every quiet window checkpoints: one write per window (the lease is never taken).
    expect(before.windows).toBeGreaterThanOrEqual(2 * 50);
    expect(before.writes).toBe(before.windows);
  });

  it('replicates a change that arrives after a quiet stretch within the idle cap', async () => {
    const cap = 40_000;
    const h = await caughtUp({ maxDelayMs: cap, checkpointMs: 2 * MINUTE });
    await run(h, 15 * MINUTE);
    const at = addMillis(h.now, 1);
    h.script.commit(at, [{ table: 'Orders', id: 2, val: 'late' }]);
    let waited = 0;
    while (h.replica.rows('orders').length < 2 && waited < 5 * MINUTE) {
      await run(h, 1_000);
      waited += 1_000;
    }
    expect(h.replica.rows('orders')).toEqual(h.expected('Orders'));
    expect(waited).toBeLessThanOrEqual(cap + 1_000);
    // Data resets the back-off: the next window of that partition is chained after the base delay.
    const lastData = h.outcomes.filter((o) => o.outcome === 'window' && o.detail.startsWith('read to'));
    expect(lastData.length).toBeGreaterThan(0);
  });

  it('a duplicate delivery of a quiet task writes nothing twice and leaves one live chain per partition', async () => {
    const h = await caughtUp({ maxDelayMs: 40_000, checkpointMs: 2 * MINUTE });
    h.advance(10_000);
    const [task] = h.queue.drain().slice(0, 1);
    const first = await h.deliver(task!);
    const dup = await h.deliver(task!);
    expect(first.detail).toMatch(/^quiet/);
    expect(dup.outcome === 'noop' || dup.detail.startsWith('quiet; nothing')).toBe(true);
    const { partitions } = await h.ledger.listPartitions();
    expect(partitions.every((p) => p.view.state === 'ready' && p.view.lease === null)).toBe(true);
  });
});
