/**
 * The steps the real-data runs share on the local stack: the start-at-snapshot backfill that loads the
 * pre-filled tables, and the catch-up once the workload has run.
 */
import type { LocalStack } from '../../../local/stack';
import type { Timestamp } from '../../../shared/domain/timestamp';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The first tick (answered 200), then the start-at-snapshot backfill it starts, until it succeeded. */
export async function loadAtSnapshot(stack: LocalStack): Promise<void> {
  const tick = await stack.tick();
  expect({ status: tick.status, body: tick.body }).toMatchObject({ status: 200 });
  const job = `${stack.functions.backfill!.url}/backfills/start-at-snapshot`;
  let state = '';
  // Waits are for conditions; their bounds only keep a stuck run inside the test's time (other suites may
  // share the cores: catch-up then takes minutes, not seconds).
  for (let i = 0; i < 600 && state !== 'succeeded'; i++) {
    state = String(((await (await fetch(job)).json()) as { state?: string }).state);
    if (state === 'failed') throw new Error('the start-at-snapshot backfill failed');
    await sleep(250);
  }
  expect(state).toBe('succeeded');
}

/** Waits until the pipeline has caught up with `last`, then stops the ticks; it must have caught up. */
export async function catchUpAndStop(stack: LocalStack, last: Timestamp): Promise<void> {
  const caughtUp = await stack.waitForCatchUp(last, 150_000);
  await stack.stopTicking();
  expect({ caughtUp, progress: stack.progress(), errors: stack.errors.slice(0, 3) }).toMatchObject({
    caughtUp: true,
  });
}
