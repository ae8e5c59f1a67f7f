/**
 * One local stack for a `describe` block: started before its tests, stopped after them. Every end-to-end file
 * wrote the same `beforeAll`/`afterAll` pair; this is that pair once, so a change to how a stack is started
 * or stopped in tests (its timeout, a check after the stop) is made in one place.
 */
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../../local/stack';

/** How long a stack may take to start in a test (the emulators, the bundle, four function processes). */
export const STACK_START_MS = 60_000;

/**
 * What every test stack starts with: the backfill and writer processes start on the first request to them
 * (most runs never call them, and a function process costs about a CPU-second to start).
 */
export const TEST_STACK: LocalStackOptions = { startOnFirstRequest: ['backfill', 'writer'] };

/**
 * Registers the start and the stop of one stack in the enclosing `describe`, and returns it. The value stands
 * for the stack started in `beforeAll` (property reads are forwarded to it); using it before the start, or
 * after a failed start, throws a clear error instead of a `TypeError` on `undefined`.
 * `afterStart` runs inside the same `beforeAll` (the first tick, a ticker) so a failure there fails the block.
 */
export function useLocalStack(
  options: LocalStackOptions,
  afterStart?: (stack: LocalStack) => Promise<void> | void,
): LocalStack {
  let started: LocalStack | undefined;
  beforeAll(async () => {
    started = await startLocalStack({ ...TEST_STACK, ...options });
    await afterStart?.(started);
  }, STACK_START_MS);
  afterAll(async () => {
    await started?.stop();
    started = undefined;
  });
  return new Proxy({} as LocalStack, {
    get(_target, property) {
      if (!started) throw new Error(`the local stack is not running (read of ${String(property)})`);
      const value = Reflect.get(started, property, started);
      return typeof value === 'function' ? value.bind(started) : value;
    },
    has(_target, property) {
      return started !== undefined && property in started;
    },
  });
}
