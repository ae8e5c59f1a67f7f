/**
 * What a test file shares, started before its tests and stopped after them: `beforeAll` / `afterAll` hooks
 * around `start` and `stop`, and a reader that says so when it is read outside a test.
 */
export function startedForFile<T>(
  what: string,
  start: () => Promise<T>,
  stop: (t: T) => Promise<void>,
): () => T {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  });
  afterAll(async () => {
    if (started !== undefined) await stop(started);
  });
  return () => {
    if (started === undefined) throw new Error(`${what} is not ready: read it inside a test`);
    return started;
  };
}
