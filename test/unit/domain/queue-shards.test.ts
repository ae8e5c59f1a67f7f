import { shardIndex } from '../../../shared/domain/queue-shards';

describe('shardIndex', () => {
  const ids = Array.from({ length: 10_000 }, (_, i) => (i * 2_654_435_761).toString(16).padStart(32, '0'));

  it('is stable: the same key, the same shard, in every process (fixed values)', () => {
    expect(shardIndex('00000000000000000000000000000000', 7)).toBe(
      shardIndex('00000000000000000000000000000000', 7),
    );
    expect([shardIndex('a', 1_000_000), shardIndex('abc', 1_000_000), shardIndex('', 1_000_000)]).toEqual([
      0xe40c292c % 1_000_000,
      0x1a47e90b % 1_000_000,
      0x811c9dc5 % 1_000_000,
    ]);
  });

  it('spreads partition ids evenly over the shards', () => {
    for (const n of [2, 3, 10]) {
      const counts = new Array<number>(n).fill(0);
      for (const id of ids) counts[shardIndex(id, n)]!++;
      for (const c of counts) expect(Math.abs(c - ids.length / n)).toBeLessThan((ids.length / n) * 0.1);
    }
  });

  it('one shard takes everything; a count that is not a positive integer is refused', () => {
    expect(new Set(ids.map((id) => shardIndex(id, 1)))).toEqual(new Set([0]));
    expect(() => shardIndex('x', 0)).toThrow(/positive integer, got 0/);
    expect(() => shardIndex('x', 1.5)).toThrow(/positive integer/);
  });
});
