/**
 * Enrichment of a batch of change records: one enricher per lookup and function instance (it holds the
 * `latest` cache and the counters), called once per table and batch over every mod, so `as-of-commit` reads
 * are grouped by commit timestamp. A mod's fact values are its keys with its new values (its old values for
 * a DELETE); a fact column a lookup needs that the mod does not carry (an UPDATE under OLD_AND_NEW_VALUES
 * that left it unchanged, a DELETE under NEW_ROW) is read from the fact row — at the commit timestamp, or
 * just before it for a DELETE — so the key is never silently unresolved.
 */
import type { DataChangeRecord, JsonValue, Mod } from '../../domain/change-record';
import type { ResolvedLookup } from '../../domain/enrichment/lookups';
import { TableNotFoundError } from '../../domain/information-schema';
import { canonicalKey } from '../../domain/row-reads';
import { addNanos, type Timestamp } from '../../domain/timestamp';
import type { DimensionReader } from '../../ports/dimension-reader';
import type { SpannerCatalog } from '../../ports/spanner-catalog';
import { readAhead } from '../common';
import type { ReplicatedTable } from '../tables';
import type { EnrichmentCounters } from './counters';
import {
  type Enriched,
  Enricher,
  type EnricherOptions,
  type EnrichmentStats,
  type FactRow,
} from './enricher';

export type { EnrichmentStats } from './enricher';

/** The enriched columns of a batch: per record, one entry per mod (in mod order). */
export type EnrichedMods = Map<DataChangeRecord, Enriched[]>;

/** What enrichment reads: the dimension tables, and fact rows whose mods lack a lookup's column. */
export interface EnrichmentPorts {
  dimensions: DimensionReader;
  /** With `tableSchema`, a lookup as of a commit from before its dimension table existed gives NULLs. */
  catalog: Pick<SpannerCatalog, 'readRowsAt'> & Partial<Pick<SpannerCatalog, 'tableSchema'>>;
}

/** The columns of a table as of `at` from the catalog, undefined when it did not exist then. */
function columnsAtOf(catalog: EnrichmentPorts['catalog']): EnricherOptions['columnsAt'] {
  const read = catalog.tableSchema?.bind(catalog);
  if (!read) return undefined;
  return async (table, at) => {
    try {
      return (await read(table, { at })).columns.map((c) => c.name);
    } catch (err) {
      if (err instanceof TableNotFoundError || /not found|no columns/i.test((err as Error).message ?? ''))
        return undefined;
      throw err;
    }
  };
}

/** A mod's fact values: keys over new values over old values (old values only for a DELETE). */
function factValues(record: DataChangeRecord, mod: Mod): Record<string, JsonValue> {
  if (record.modType === 'DELETE') return { ...mod.oldValues, ...mod.keys };
  return { ...mod.oldValues, ...mod.newValues, ...mod.keys };
}

/** The enrichers of one function instance. */
export class Enrichments {
  private readonly enrichers = new Map<string, Enricher>();

  /** Over a function's ports: its dimension reader (none: a table with lookups fails loudly) and catalog. */
  static over(ports: {
    dimensions?: DimensionReader | undefined;
    catalog: EnrichmentPorts['catalog'];
    enrichmentCounters?: EnrichmentCounters | undefined;
  }): Enrichments {
    const { dimensions, catalog, enrichmentCounters } = ports;
    return new Enrichments(dimensions ? { dimensions, catalog } : undefined, {}, enrichmentCounters);
  }

  constructor(
    private readonly ports: EnrichmentPorts | undefined,
    private readonly options: Omit<EnricherOptions, 'reader'> = {},
    /** Where the counters are published for `GET /status` (absent: only {@link stats}). */
    private readonly counters?: EnrichmentCounters,
  ) {}

  /**
   * The enriched columns of `records` (one source table's, in canonical order) by the table's lookups; empty
   * when it has none. `at` overrides the commit timestamp (a backfill reads at its snapshot timestamp).
   * @throws SluiceError when a read keeps failing (retryable: the window is retried).
   */
  async forRecords(
    table: ReplicatedTable,
    records: readonly DataChangeRecord[],
    at?: Timestamp,
  ): Promise<EnrichedMods> {
    const out: EnrichedMods = new Map();
    if (table.lookups.length === 0 || records.length === 0) return out;
    const ports = this.ports;
    if (!ports)
      throw new Error(`table ${table.source} has lookups but this function has no dimension reader`);
    const mods = records.flatMap((record) =>
      record.mods.map((mod) => ({ record, values: factValues(record, mod) })),
    );
    await this.complete(ports, table, mods);
    const rows: FactRow[] = mods.map((m) => ({ values: m.values, at: at ?? m.record.commitTimestamp }));
    const merged = rows.map((): Enriched => ({}));
    for (const lookup of table.lookups) {
      const columns = await this.enricherOf(ports, lookup).enrich(rows);
      columns.forEach((c, i) => {
        Object.assign(merged[i]!, c);
      });
    }
    let i = 0;
    for (const record of records)
      out.set(
        record,
        record.mods.map(() => merged[i++]!),
      );
    // Published in the background (never failing the batch): the scheduler sums it into the status.
    void this.counters?.publish(() => this.stats());
    return out;
  }

  /**
   * The enriched columns of `rows` (fact values in key form) by `lookups`, all at `at` (a backfill's
   * snapshot timestamp), in row order.
   */
  async forRows(
    lookups: readonly ResolvedLookup[],
    rows: ReadonlyArray<Record<string, JsonValue>>,
    at: Timestamp,
  ): Promise<Enriched[]> {
    const ports = this.ports;
    if (!ports) throw new Error('lookups configured but this function has no dimension reader');
    const facts: FactRow[] = rows.map((values) => ({ values, at }));
    const merged = facts.map((): Enriched => ({}));
    for (const lookup of lookups) {
      const columns = await this.enricherOf(ports, lookup).enrich(facts);
      columns.forEach((c, i) => {
        Object.assign(merged[i]!, c);
      });
    }
    void this.counters?.publish(() => this.stats());
    return merged;
  }

  /** The counters of every lookup applied so far. */
  stats(): EnrichmentStats {
    const out: EnrichmentStats = {};
    for (const [id, e] of this.enrichers)
      out[id] = { dimension: e.lookup.dimension, mode: e.lookup.mode, ...e.stats() };
    return out;
  }

  private enricherOf(ports: EnrichmentPorts, lookup: ResolvedLookup): Enricher {
    // A re-resolved lookup (after drift) with the same meaning keeps its cache and counters.
    const signature = JSON.stringify([
      lookup.dimension,
      lookup.key,
      lookup.columns,
      lookup.mode,
      lookup.cache,
    ]);
    let e = this.enrichers.get(lookup.id);
    if (
      !e ||
      JSON.stringify([e.lookup.dimension, e.lookup.key, e.lookup.columns, e.lookup.mode, e.lookup.cache]) !==
        signature
    ) {
      const columnsAt = columnsAtOf(ports.catalog);
      e = new Enricher(lookup, {
        ...this.options,
        reader: ports.dimensions,
        ...(columnsAt ? { columnsAt } : {}),
      });
      this.enrichers.set(lookup.id, e);
    }
    return e;
  }

  /** Fills fact columns the lookups need from the fact row, grouped by read timestamp (one read each, a few in flight). */
  private async complete(
    ports: EnrichmentPorts,
    table: ReplicatedTable,
    mods: Array<{ record: DataChangeRecord; values: Record<string, JsonValue> }>,
  ): Promise<void> {
    const needed = [...new Set(table.lookups.flatMap((l) => l.key.map((k) => k.factColumn)))];
    const byAt = new Map<Timestamp, Array<Record<string, JsonValue>>>();
    for (const m of mods) {
      if (needed.every((c) => m.values[c] !== undefined)) continue;
      const at =
        m.record.modType === 'DELETE' ? addNanos(m.record.commitTimestamp, -1) : m.record.commitTimestamp;
      const group = byAt.get(at) ?? [];
      group.push(m.values);
      byAt.set(at, group);
    }
    const keys = table.plan.keys;
    await readAhead(
      [...byAt],
      ([at, group]) => ports.catalog.readRowsAt(table.source, keys, group, at),
      (read, [, group]) => {
        const rows = new Map(read.rows.map((r) => [canonicalKey(keys, r), r]));
        for (const values of group) {
          const row = rows.get(canonicalKey(keys, values));
          if (!row) continue;
          for (const c of needed) if (values[c] === undefined && row[c] !== undefined) values[c] = row[c]!;
        }
      },
    );
  }
}
