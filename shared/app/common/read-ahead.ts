/**
 * Reads a window needs one per commit timestamp (the replica's reads at a commit timestamp, the lookups as of
 * a commit), started a few ahead of the one being used so their round trips overlap instead of adding up,
 * while every answer is still used in the order of its item (ADR-3003). A failed read fails the loop when its
 * turn comes, never before and never as an unhandled rejection; reads still in flight then are left to end.
 */

/** Reads kept in flight ahead of the one being used: several round trips overlap, sessions stay few. */
export const READS_AHEAD = 8;

/**
 * Calls `read` for every item, at most `ahead` at once, and hands each answer to `use` in the order of
 * `items`, one after the other (a `use` may change what the next `use` sees; it never sees answers out of
 * order). @throws the first error of a read or a `use`, in item order.
 */
export async function readAhead<T, R>(
  items: readonly T[],
  read: (item: T) => Promise<R>,
  use: (answer: R, item: T) => void | Promise<void>,
  ahead = READS_AHEAD,
): Promise<void> {
  if (!Number.isInteger(ahead) || ahead < 1)
    throw new RangeError(`readAhead: ahead must be ≥ 1 (got ${ahead})`);
  const pending: Array<Promise<R>> = [];
  let next = 0;
  const start = () => {
    const p = read(items[next++] as T);
    // Seen here so a read that fails while an earlier one is used is not an unhandled rejection; its error
    // is thrown when its turn comes.
    p.catch(() => undefined);
    pending.push(p);
  };
  for (let i = 0; i < items.length; i++) {
    while (next < items.length && next - i < ahead) start();
    const answer = await (pending.shift() as Promise<R>);
    await use(answer, items[i] as T);
  }
}
