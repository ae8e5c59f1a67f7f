/**
 * Enrichment of change rows by their lookups. `as-of-commit`: one read per dimension table and commit
 * timestamp over the distinct keys of the rows at that timestamp, each row getting the dimension row exactly
 * as it was when the fact changed. `latest`: the partial cache first, one strong read for the keys it
 * misses. A missing dimension row gives NULL columns (a LEFT join) and is counted; a fact row without a key
 * value (NULL, or absent from the change) is counted as unresolved. Point reads are retried on ABORTED,
 * DEADLINE_EXCEEDED and UNAVAILABLE only: the client already retries RESOURCE_EXHAUSTED honouring the
 * server's delay, which an immediate retry would undermine. Every read reports the dimension's column types:
 * a brought column retyped since the lookup was resolved fails the read with a permanent error naming it
 * when its enriched column cannot hold the new type, or is taken as it is now, with the cache dropped, when
 * it can (`checkDimensionTypes`).
 */
import type { JsonValue, SpannerType } from '../../domain/change-record';
import { checkDimensionTypes } from '../../domain/enrichment/dimension-types';
import type { ResolvedLookup } from '../../domain/enrichment/lookups';
import { GrpcCode, SluiceError } from '../../domain/errors';
import { formatTimestamp, type Timestamp } from '../../domain/timestamp';
import type { WriterValue } from '../../domain/value-mapping';
import type { DimensionReader, KeyValues } from '../../ports/dimension-reader';
import { readAhead } from '../common';
import { type CacheStats, LookupCache } from './cache';

/** One fact row to enrich: its column values (keys included) and its commit timestamp. */
export interface FactRow {
  values: Record<string, JsonValue>;
  at: Timestamp;
}

/** The brought columns of one row, by BigQuery column name. */
export type Enriched = Record<string, WriterValue>;

/** Counters per lookup, for status. */
export interface LookupStats {
  rows: number;
  reads: number;
  retries: number;
  /** Rows whose dimension row does not exist (their columns are NULL). */
  missing: number;
  /** Rows without a value for a key column (their columns are NULL). */
  unresolved: number;
  cache: CacheStats | null;
}

const NOT_FOUND: number = GrpcCode.NOT_FOUND;
const RETRIED = new Set<number>([GrpcCode.ABORTED, GrpcCode.DEADLINE_EXCEEDED, GrpcCode.UNAVAILABLE]);

/** Options of {@link Enricher}. */
export interface EnricherOptions {
  reader: DimensionReader;
  /** Wall clock in milliseconds (cache expiry). */
  nowMs?: () => number;
  /** Attempts of one read (default 5), with doubling back-off from `backoffMs` (default 50). */
  attempts?: number;
  backoffMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /**
   * The columns of a dimension table as of a timestamp, undefined when it did not exist then: a read as of
   * a commit from before the table (or a brought column) existed fails NOT_FOUND, and this tells that apart
   * from a table that is gone. Without it such a read fails the window.
   */
  columnsAt?: (table: string, at: Timestamp) => Promise<string[] | undefined>;
}

/** Enriches rows by one lookup. One per lookup and function instance (it holds the cache). */
export class Enricher {
  private readonly cache: LookupCache | undefined;
  private readonly counters = { rows: 0, reads: 0, retries: 0, missing: 0, unresolved: 0 };
  /** The type each brought column is held as: the resolved one, or a compatible one a read reported since. */
  private readonly types: Map<string, SpannerType>;

  constructor(
    readonly lookup: ResolvedLookup,
    private readonly options: EnricherOptions,
  ) {
    const now = options.nowMs ?? Date.now;
    this.cache = lookup.cache ? new LookupCache(lookup.cache, now) : undefined;
    this.types = new Map(lookup.columns.map((c) => [c.source, c.spannerType]));
  }

  /** The brought columns of each row, in the order of `rows`. @throws SluiceError when a read keeps failing. */
  async enrich(rows: FactRow[]): Promise<Enriched[]> {
    this.counters.rows += rows.length;
    const keys = rows.map((r) => this.keyOf(r));
    const found = new Map<string, Record<string, WriterValue> | null>();
    const groups = new Map<Timestamp | 'latest', Map<string, KeyValues>>();
    rows.forEach((r, i) => {
      const key = keys[i];
      if (!key) return;
      const at = this.lookup.mode === 'latest' ? 'latest' : r.at;
      const id = this.cacheKey(key, at);
      if (found.has(id)) return;
      const cached = at === 'latest' ? this.cache?.get(id) : undefined;
      if (cached !== undefined) {
        found.set(id, cached);
        return;
      }
      const group = groups.get(at) ?? new Map<string, KeyValues>();
      group.set(id, key);
      groups.set(at, group);
    });
    // One read per timestamp, a few in flight at once (ADR-3003); their types are checked in order.
    await readAhead(
      [...groups],
      ([at, group]) => this.readAsOf([...group.values()], at),
      (answer, [at, group]) => {
        const read = this.checked(answer);
        [...group.keys()].forEach((id, i) => {
          const row = read[i] ?? null;
          found.set(id, row);
          if (at === 'latest') this.cache?.set(id, row);
        });
      },
    );
    return rows.map((r, i) =>
      this.columnsOf(keys[i] ? found.get(this.cacheKey(keys[i]!, this.atOf(r))) : undefined),
    );
  }

  stats(): LookupStats {
    return { ...this.counters, cache: this.cache?.stats() ?? null };
  }

  private atOf(r: FactRow): Timestamp | 'latest' {
    return this.lookup.mode === 'latest' ? 'latest' : r.at;
  }

  private cacheKey(key: KeyValues, at: Timestamp | 'latest'): string {
    return at === 'latest' ? JSON.stringify(key) : `${at}/${JSON.stringify(key)}`;
  }

  /** The key in declared primary-key order, or undefined when a key value is missing. */
  private keyOf(r: FactRow): KeyValues | undefined {
    const key: KeyValues = [];
    for (const k of this.lookup.key) {
      const v = r.values[k.factColumn];
      if (v === undefined || v === null) {
        this.counters.unresolved++;
        return undefined;
      }
      key.push(v);
    }
    return key;
  }

  private columnsOf(row: Record<string, WriterValue> | null | undefined): Enriched {
    if (row === null) this.counters.missing++;
    const out: Enriched = {};
    for (const c of this.lookup.columns) out[c.target] = row?.[c.source] ?? null;
    return out;
  }

  /** A read's rows, its reported types checked (@throws SluiceError `permanent` on an incompatible change). */
  private checked({ rows, types }: Awaited<ReturnType<Enricher['readAsOf']>>) {
    const check = checkDimensionTypes(this.lookup, this.types, types);
    if (check.kind === 'incompatible') throw check.error;
    if (check.kind === 'compatible') {
      for (const c of check.changes) this.types.set(c.column, c.to);
      // Rows cached before the change were read with the old type: read them again.
      this.cache?.clear();
    }
    return rows;
  }

  /**
   * A read as of a commit from before the dimension table existed gives no rows (each counted missing); one
   * from before a brought column existed reads the other columns (that one is NULL), as a LEFT join on the
   * database of that time would (ADR-2123).
   */
  private async readAsOf(keys: KeyValues[], at: Timestamp | 'latest') {
    const columns = this.lookup.columns.map((c) => c.source);
    try {
      return await this.readRetried(keys, columns, at);
    } catch (err) {
      const columnsAt = this.options.columnsAt;
      if (at === 'latest' || !columnsAt || (err as { cause?: { code?: unknown } }).cause?.code !== NOT_FOUND)
        throw err;
      const existing = await columnsAt(this.lookup.dimension, at);
      if (existing === undefined) return { rows: keys.map(() => null), types: {} };
      const present = columns.filter((c) => existing.includes(c));
      if (present.length === columns.length) throw err;
      return this.readRetried(keys, present, at);
    }
  }

  private async readRetried(keys: KeyValues[], columns: string[], at: Timestamp | 'latest') {
    const attempts = this.options.attempts ?? 5;
    const sleep = this.options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    for (let attempt = 1; ; attempt++) {
      try {
        this.counters.reads++;
        return await this.options.reader.read(this.lookup.dimension, keys, columns, at);
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        const where = `lookup ${this.lookup.id} of ${this.lookup.dimension} at ${at === 'latest' ? 'latest' : formatTimestamp(at)}`;
        if (typeof code !== 'number' || !RETRIED.has(code) || attempt >= attempts)
          throw SluiceError.from(err, where);
        this.counters.retries++;
        await sleep((this.options.backoffMs ?? 50) * 2 ** (attempt - 1));
      }
    }
  }
}

/** Counters of every lookup this instance applied, by lookup id (`<table>.lookups[<i>]`). */
export type EnrichmentStats = Record<string, LookupStats & { dimension: string; mode: string }>;
