/**
 * The lookups' counters across function instances, for `GET /status`: each reader instance publishes its
 * cumulative counters as the custom metadata of one object of its own (`<pipeline>/enrichment/<instance>.json`,
 * written only by it), at most every `intervalMs` and after the last change; the scheduler sums them from one
 * listing per tick — no object is read. Counters survive an instance only in its object, so the sum is every
 * count since the objects were written (ADR-1805).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../domain/log';
import type { Generation, ObjectStore } from '../../ports/object-store';
import type { EnrichmentStats } from './apply';

const METADATA_KEY = 'sluice-enrichment';

/** One lookup's counters summed over every instance. */
export interface LookupTotals {
  dimension: string;
  mode: string;
  rows: number;
  reads: number;
  retries: number;
  missing: number;
  unresolved: number;
  cacheHits: number;
  cacheMisses: number;
}

/** The status's `enrichment` section. */
export interface EnrichmentTotals {
  lookups: Record<string, LookupTotals>;
  /** Instances whose counters are summed. */
  instances: number;
}

/** The prefix of the counter objects of a pipeline. */
export function enrichmentPrefix(pipeline: string): string {
  return `${pipeline}/enrichment/`;
}

/** Adds one instance's published counters (untrusted JSON) into `totals`; malformed entries are skipped. */
export function addCounters(totals: EnrichmentTotals, text: string | undefined): void {
  let parsed: unknown;
  try {
    parsed = text === undefined ? undefined : JSON.parse(text);
  } catch {
    return;
  }
  if (typeof parsed !== 'object' || parsed === null) return;
  totals.instances++;
  for (const [id, raw] of Object.entries(parsed as Record<string, Record<string, unknown>>)) {
    const n = (k: string) => (typeof raw?.[k] === 'number' ? (raw[k] as number) : 0);
    const cache = (raw?.cache ?? {}) as Record<string, unknown>;
    const c = (k: string) => (typeof cache[k] === 'number' ? (cache[k] as number) : 0);
    const t = totals.lookups[id] ?? {
      dimension: String(raw?.dimension ?? ''),
      mode: String(raw?.mode ?? ''),
      rows: 0,
      reads: 0,
      retries: 0,
      missing: 0,
      unresolved: 0,
      cacheHits: 0,
      cacheMisses: 0,
    };
    totals.lookups[id] = t;
    t.rows += n('rows');
    t.reads += n('reads');
    t.retries += n('retries');
    t.missing += n('missing');
    t.unresolved += n('unresolved');
    t.cacheHits += c('hits');
    t.cacheMisses += c('misses');
  }
}

/** Publishes this instance's counters and sums everyone's. */
export class EnrichmentCounters {
  private readonly name: string;
  private generation: Generation = 0;
  private lastText = '';
  private lastAt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: ObjectStore,
    private readonly pipeline: string,
    private readonly options: { log?: Logger; intervalMs?: number; instance?: string } = {},
  ) {
    this.name = `${enrichmentPrefix(pipeline)}${options.instance ?? randomUUID()}.json`;
  }

  /**
   * Publishes `stats` when they changed: at once when the last write is `intervalMs` old (default 5 s),
   * otherwise once that interval has passed. Never throws: a failed write is logged and tried again later.
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
    this.chain = this.chain.then(() => this.write(JSON.stringify(stats())));
    return this.chain;
  }

  /** Every instance's counters summed, from one listing per 1000 instances. */
  async totals(): Promise<EnrichmentTotals & { calls: number }> {
    const totals: EnrichmentTotals = { lookups: {}, instances: 0 };
    let pageToken: string | undefined;
    let calls = 0;
    do {
      const page = await this.store.list(enrichmentPrefix(this.pipeline), { pageToken, maxResults: 1000 });
      calls++;
      for (const item of page.items) addCounters(totals, item.metadata[METADATA_KEY]);
      pageToken = page.nextPageToken;
    } while (pageToken);
    return { ...totals, calls };
  }

  private async write(text: string): Promise<void> {
    if (text === this.lastText || text === '{}') return;
    this.lastAt = Date.now();
    try {
      const options = { metadata: { [METADATA_KEY]: text }, contentType: 'application/json' };
      let out = await this.store.write(this.name, Buffer.from(text), {
        ...options,
        ifGeneration: this.generation,
      });
      if (!out.ok) {
        // Only this instance writes the object: a conflict is an earlier write whose answer was lost.
        const current = await this.store.read(this.name);
        out = await this.store.write(this.name, Buffer.from(text), {
          ...options,
          ifGeneration: current?.generation ?? 0,
        });
      }
      if (out.ok) {
        this.generation = out.generation;
        this.lastText = text;
      }
    } catch (err) {
      this.options.log?.warn('enrichment.counters-unpublished', {
        object: this.name,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
}
