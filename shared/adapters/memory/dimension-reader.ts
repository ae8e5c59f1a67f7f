/** In-memory {@link DimensionReader}: versioned rows, read as of a timestamp; failures scripted per call. */
import type { SpannerType } from '../../domain/change-record';
import type { Timestamp } from '../../domain/timestamp';
import type { WriterValue } from '../../domain/value-mapping';
import type { DimensionReader, DimensionRows, KeyValues } from '../../ports/dimension-reader';

type Row = Record<string, WriterValue>;

/** Rows of dimension tables with their history; `latest` reads the newest version. */
export class MemoryDimensionReader implements DimensionReader {
  private readonly versions = new Map<string, Array<{ at: Timestamp; row: Row | null }>>();
  /** Errors thrown by the next calls, in order (e.g. `{code: 10}` for ABORTED). */
  readonly failNext: unknown[] = [];
  /** Every call, for tests that count round trips. */
  readonly calls: Array<{ table: string; keys: number; at: Timestamp | 'latest' }> = [];

  /** The column types reads report, per table (none set: reads report no types). */
  readonly types = new Map<string, Record<string, SpannerType>>();

  /** When each table (and, by name, each column added later) came to exist; absent: always. */
  private readonly created = new Map<string, { at: Timestamp; columns: Map<string, Timestamp> }>();

  /**
   * Makes `table` exist from `at` on (and each of `columns` from its own timestamp): a read at an earlier
   * timestamp fails NOT_FOUND, as Spanner's read of a table or column the schema of that time lacks does.
   */
  createdAt(table: string, at: Timestamp, columns: Record<string, Timestamp> = {}): void {
    this.created.set(table, { at, columns: new Map(Object.entries(columns)) });
  }

  /** Writes (or deletes, with null) the row of `key` at `at`. */
  write(table: string, key: KeyValues, at: Timestamp, row: Row | null): void {
    const id = `${table}/${JSON.stringify(key)}`;
    const list = this.versions.get(id) ?? [];
    list.push({ at, row });
    list.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    this.versions.set(id, list);
  }

  async read(
    table: string,
    keys: KeyValues[],
    columns: string[],
    at: Timestamp | 'latest',
  ): Promise<DimensionRows> {
    this.calls.push({ table, keys: keys.length, at });
    const failure = this.failNext.shift();
    if (failure !== undefined) throw failure;
    this.checkExists(table, columns, at);
    const known = this.types.get(table) ?? {};
    const types = Object.fromEntries(columns.filter((c) => known[c]).map((c) => [c, known[c]!]));
    const rows = keys.map((key) => {
      const list = this.versions.get(`${table}/${JSON.stringify(key)}`) ?? [];
      const visible = at === 'latest' ? list : list.filter((v) => v.at <= at);
      const row = visible.at(-1)?.row ?? null;
      return row ? Object.fromEntries(columns.filter((c) => c in row).map((c) => [c, row[c]!])) : null;
    });
    return { rows, types };
  }

  private checkExists(table: string, columns: string[], at: Timestamp | 'latest'): void {
    const created = this.created.get(table);
    if (!created || at === 'latest') return;
    if (at < created.at) throw Object.assign(new Error(`Table not found: ${table}`), { code: 5 });
    for (const c of columns) {
      const since = created.columns.get(c);
      if (since !== undefined && at < since)
        throw Object.assign(new Error(`Column not found in table ${table}: ${c}`), { code: 5 });
    }
  }
}
