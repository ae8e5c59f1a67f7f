/**
 * The lookups' counters across function instances, for `GET /status`: each reader instance publishes its
 * cumulative counters as the custom metadata of one object of its own (`<pipeline>/enrichment/<instance>.json`,
 * written only by it), at most every `intervalMs` and after the last change; the scheduler sums them from one
 * listing per tick (ADR-1805). Objects of instances that stopped writing are folded into one rollup, which
 * the status adds (`rollup.ts`, ADR-1806).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../domain/log';
import { type Generation, listAll, type ObjectStore } from '../../ports/object-store';
import type { EnrichmentStats } from './enricher';
import { type CounterObject, DEFAULT_RETIRE_AFTER_MS, foldAndSum } from './rollup';
import { type LookupTotals, parseCounters } from './totals';

const METADATA_KEY = 'sluice-enrichment';

export type { LookupTotals } from './totals';

/** The status's `enrichment` section. */
export interface EnrichmentTotals {
  lookups: Record<string, LookupTotals>;
  /** Counter objects whose counts are summed: the live ones plus every one folded into the rollup. */
  instances: number;
}

/** The prefix of the counter objects of a pipeline. */
export function enrichmentPrefix(pipeline: string): string {
  return `${pipeline}/enrichment/`;
}

/** `stats` minus `base`, for the counts the status sums (cache size and evictions are kept as they are). */
function minus(stats: EnrichmentStats, base: EnrichmentStats): EnrichmentStats {
  const out: EnrichmentStats = {};
  for (const [id, s] of Object.entries(stats)) {
    const b = base[id];
    const cache = s.cache && {
      ...s.cache,
      hits: s.cache.hits - (b?.cache?.hits ?? 0),
      misses: s.cache.misses - (b?.cache?.misses ?? 0),
    };
    out[id] = {
      ...s,
      rows: s.rows - (b?.rows ?? 0),
      reads: s.reads - (b?.reads ?? 0),
      retries: s.retries - (b?.retries ?? 0),
      missing: s.missing - (b?.missing ?? 0),
      unresolved: s.unresolved - (b?.unresolved ?? 0),
      cache,
    };
  }
  return out;
}

/** Options of {@link EnrichmentCounters}. */
export interface CountersOptions {
  log?: Logger;
  /** Least time between two writes of this instance's object (default 5 s). */
  intervalMs?: number;
  /** This instance's name (default a random UUID). */
  instance?: string;
  /** Objects not written for this long are folded into the rollup (default 1 h; see ADR-1806). */
  retireAfterMs?: number;
  /** Milliseconds since the epoch, for the retirement age (tests). */
  now?: () => number;
}

/** Publishes this instance's counters, and (in the scheduler) folds retired instances and sums everyone's. */
export class EnrichmentCounters {
  private readonly instance: string;
  /** Publish epoch: a fresh object name once the scheduler folded and deleted this instance's object. */
  private epoch = 0;
  private generation: Generation = 0;
  /** The counts already published under earlier epochs' names, subtracted from what this epoch publishes. */
  private baseline: EnrichmentStats = {};
  /** The counters of the last confirmed write, and its text. */
  private lastStats: EnrichmentStats = {};
  private lastText = '';
  private lastAt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: ObjectStore,
    private readonly pipeline: string,
    private readonly options: CountersOptions = {},
  ) {
    this.instance = options.instance ?? randomUUID();
  }

  /** This instance's object name in the current epoch. */
  get name(): string {
    const suffix = this.epoch === 0 ? '' : `.${this.epoch}`;
    return `${enrichmentPrefix(this.pipeline)}${this.instance}${suffix}.json`;
  }

  /**
   * Publishes `stats` when they changed: at once when the last write is `intervalMs` old (default 5 s),
   * otherwise once that interval has passed. Never throws: a failed write is logged and tried again after
   * the interval, so an unconfirmed write is settled while the object is live (ADR-1806).
   */
  publish(stats: () => EnrichmentStats): Promise<void> {
    const wait = this.lastAt + (this.options.intervalMs ?? 5_000) - Date.now();
    if (wait > 0) {
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        void this.publish(stats);
      }, wait);
      this.timer.unref?.();
      return this.chain;
    }
    this.chain = this.chain.then(async () => {
      if (await this.write(stats())) return;
      this.timer ??= setTimeout(
        () => {
          this.timer = undefined;
          void this.publish(stats);
        },
        Math.max(this.options.intervalMs ?? 5_000, 1_000),
      );
      this.timer.unref?.();
    });
    return this.chain;
  }

  /**
   * Every counter object summed, from one listing per 1000 objects and one read of the rollup; objects not
   * written for the retirement age are folded into the rollup first (the scheduler's tick calls this).
   */
  async totals(): Promise<EnrichmentTotals & { calls: number; folded: number }> {
    const { items, calls } = await listAll(this.store, enrichmentPrefix(this.pipeline));
    const objects: CounterObject[] = items.flatMap((info) => {
      const lookups = parseCounters(info.metadata[METADATA_KEY]);
      return lookups ? [{ info, lookups }] : [];
    });
    const clock = {
      now: this.options.now?.() ?? Date.now(),
      retireAfterMs: this.options.retireAfterMs ?? DEFAULT_RETIRE_AFTER_MS,
    };
    const sum = await foldAndSum(this.store, this.pipeline, objects, clock, (object, err) =>
      this.options.log?.warn('enrichment.counters-undeleted', { object, error: String(err) }),
    );
    if (sum.folded > 0) this.options.log?.info('enrichment.counters-folded', { objects: sum.folded });
    return { lookups: sum.lookups, instances: sum.instances, calls, folded: sum.folded };
  }

  /** Writes `stats` when changed; false when the write failed (to be tried again). */
  private async write(stats: EnrichmentStats): Promise<boolean> {
    const text = JSON.stringify(minus(stats, this.baseline));
    if (text === this.lastText || Object.keys(stats).length === 0) return true;
    this.lastAt = Date.now();
    try {
      let out = await this.put(text, this.generation);
      if (!out.ok) {
        const current = await this.store.read(this.name);
        if (current || this.generation === 0) {
          // Only this instance writes the object: a conflict is an earlier write whose answer was lost.
          out = await this.put(text, current?.generation ?? 0);
        } else {
          // Folded and deleted by the scheduler, which rolled up exactly the last confirmed write (younger
          // writes are never retired): publish what came after it under a name the rollup never saw.
          this.epoch++;
          this.baseline = this.lastStats;
          out = await this.put(JSON.stringify(minus(stats, this.baseline)), 0);
        }
      }
      if (!out.ok) return false;
      this.generation = out.generation;
      this.lastText = JSON.stringify(minus(stats, this.baseline));
      this.lastStats = structuredClone(stats); // The baseline of a later epoch: never shared with the source.
      return true;
    } catch (err) {
      this.options.log?.warn('enrichment.counters-unpublished', {
        object: this.name,
        error: err instanceof Error ? err.message : String(err),
      });
      return false;
    }
  }

  private put(text: string, ifGeneration: Generation) {
    const metadata = { [METADATA_KEY]: text };
    return this.store.write(this.name, Buffer.from(text), {
      metadata,
      contentType: 'application/json',
      ifGeneration,
    });
  }
}
