/** Lets an in-memory pipeline run on: the clock moves, the scheduler ticks and its tasks run. */
import type { Harness } from './harness';

/** Advances the clock by `stepMs` and runs a tick and its tasks, `rounds` times. */
export async function settle(h: Harness, rounds = 4, stepMs = 6_000): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    h.advance(stepMs);
    await h.tick();
    await h.drain();
  }
}
