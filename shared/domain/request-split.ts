/** Splitting a batch into requests under a size limit (and, optionally, a count limit). */

/**
 * Splits `items`, in order, into groups whose summed `bytesOf` stays within `maxBytes` and whose length stays
 * within `maxItems`. A single item over `maxBytes` goes alone: the service's own limit decides it.
 */
export function splitBySize<T>(
  items: readonly T[],
  bytesOf: (item: T) => number,
  maxBytes: number,
  maxItems = Number.POSITIVE_INFINITY,
): T[][] {
  const groups: T[][] = [];
  let current: T[] = [];
  let size = 0;
  for (const item of items) {
    const bytes = bytesOf(item);
    if (current.length > 0 && (current.length >= maxItems || size + bytes > maxBytes)) {
      groups.push(current);
      current = [];
      size = 0;
    }
    current.push(item);
    size += bytes;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}
