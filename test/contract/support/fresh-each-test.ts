/**
 * The subject of a contract suite, made anew by `make` before each test of the enclosing `describe`: the
 * returned function gives the current one (call it inside tests).
 */
export function freshEachTest<T>(make: () => Promise<T>): () => T {
  let current: T | undefined;
  beforeEach(async () => {
    current = await make();
  });
  return () => {
    if (current === undefined)
      throw new Error('the contract subject is made before each test: read it inside one');
    return current;
  };
}
