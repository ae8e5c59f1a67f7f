/**
 * Reader queues in shards. One Cloud Tasks queue dispatches at most 5,000 tasks at once and 500 a second
 * (gcp-platform reference, RateLimits), and a continuous window holds its dispatch for the whole long poll:
 * past 5,000 partitions a pipeline spreads its reader tasks over several queues. Every task of one partition
 * goes to the same queue, whoever enqueues it (the scheduler's tick, the reader chaining its next window), so
 * the task's name still de-duplicates: Cloud Tasks keeps names per queue.
 */

/** The shard of `count` that `key` (a partition id) belongs to: 32-bit FNV-1a, stable across processes. */
export function shardIndex(key: string, count: number): number {
  if (!Number.isInteger(count) || count < 1)
    throw new RangeError(`shard count must be a positive integer, got ${count}`);
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % count;
}
