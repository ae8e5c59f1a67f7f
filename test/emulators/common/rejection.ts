/** Test helper for the emulators' client-level tests: the error a call fails with. */

/**
 * The error `p` rejects with, typed as the client library's error type `E`. Throws when `p` resolves, so a
 * call that was expected to fail fails the test instead of passing silently.
 */
export async function rejection<E = unknown>(p: Promise<unknown>): Promise<E> {
  try {
    await p;
  } catch (err) {
    return err as E;
  }
  throw new Error('expected the call to fail');
}
