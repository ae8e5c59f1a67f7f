/**
 * The partial cache of a `latest` lookup: expire-after-write, a maximum size (the least recently written
 * entry goes first), and optionally remembered misses. A full-table cache is refused by the configuration.
 */
import type { WriterValue } from '../../domain/value-mapping';

type Row = Record<string, WriterValue> | null;

/** Cache counters. */
export interface CacheStats {
  hits: number;
  misses: number;
  evictions: number;
  size: number;
}

/** Keyed by the key's JSON; `now` is wall-clock milliseconds. */
export class LookupCache {
  private readonly entries = new Map<string, { row: Row; writtenAt: number }>();
  private readonly counters = { hits: 0, misses: 0, evictions: 0 };

  constructor(
    private readonly options: { maxSize: number; expireAfterWriteMs: number; cacheMissing: boolean },
    private readonly now: () => number,
  ) {}

  /** The cached row (null: a cached miss), or undefined when absent or expired. */
  get(key: string): Row | undefined {
    const e = this.entries.get(key);
    if (e && this.now() - e.writtenAt < this.options.expireAfterWriteMs) {
      this.counters.hits++;
      return e.row;
    }
    if (e) this.entries.delete(key);
    this.counters.misses++;
    return undefined;
  }

  /** Remembers a read row (a missing one only with `cacheMissing`). */
  set(key: string, row: Row): void {
    if (row === null && !this.options.cacheMissing) return;
    this.entries.delete(key);
    this.entries.set(key, { row, writtenAt: this.now() });
    while (this.entries.size > this.options.maxSize) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
      this.counters.evictions++;
    }
  }

  /** Drops every entry (the dimension's schema changed); the counters are kept. */
  clear(): void {
    this.entries.clear();
  }

  stats(): CacheStats {
    return { ...this.counters, size: this.entries.size };
  }
}
