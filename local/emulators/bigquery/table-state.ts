/**
 * The contents of one table as applied: plain appended rows plus, for tables with a primary key, the CDC
 * state per key (latest UPSERT or a remembered DELETE), resolved by `_CHANGE_SEQUENCE_NUMBER` and ingestion
 * order. Every ingested row is also recorded in the ingestion history for inspection.
 */
import { compareSequenceNumbers, type SequenceNumber } from './sequence';
import type { Row } from './values';
import { keyOf } from './values';

/** How a row arrived. */
export type ChangeType = 'INSERT' | 'UPSERT' | 'DELETE';

/** One ingested row, as the history records it. */
export interface Ingestion {
  /** Global ingestion order (1-based, monotonically increasing). */
  ingest: number;
  stream: string;
  changeType: ChangeType;
  sequenceNumber?: string;
  row: Row;
  /** False when an UPSERT/DELETE lost against a newer change for the same key. */
  applied: boolean;
}

/** The applied state of one primary key. */
export interface KeyState {
  ingest: number;
  sequence?: SequenceNumber;
  /** null for a remembered DELETE (tombstone). */
  row: Row | null;
}

/** A row to ingest. */
export interface IncomingRow {
  row: Row;
  changeType: ChangeType;
  sequenceNumber?: { text: string; parsed: SequenceNumber };
}

let ingestCounter = 0;

/** Applied contents of one table. */
export class TableState {
  private plain: Array<{ ingest: number; row: Row }> = [];
  private keyed = new Map<string, KeyState>();
  readonly history: Ingestion[] = [];

  constructor(private readonly primaryKey: () => string[] | undefined) {}

  /** Ingests rows atomically in order (the caller has validated them). */
  ingest(stream: string, rows: IncomingRow[]): void {
    for (const r of rows) {
      const ingest = ++ingestCounter;
      const applied = r.changeType === 'INSERT' ? this.insert(ingest, r.row) : this.change(ingest, r);
      this.history.push({
        ingest,
        stream,
        changeType: r.changeType,
        ...(r.sequenceNumber ? { sequenceNumber: r.sequenceNumber.text } : {}),
        row: r.row,
        applied,
      });
    }
  }

  private insert(ingest: number, row: Row): boolean {
    this.plain.push({ ingest, row });
    return true;
  }

  private change(ingest: number, r: IncomingRow): boolean {
    const pk = this.primaryKey() ?? [];
    const key = keyOf(r.row, pk);
    const current = this.keyed.get(key);
    if (current && !newer(r.sequenceNumber?.parsed, current.sequence)) return false;
    // A change replaces every baseline row with the same key (earlier plain appends).
    this.plain = this.plain.filter((p) => keyOf(p.row, pk) !== key);
    this.keyed.set(key, {
      ingest,
      ...(r.sequenceNumber ? { sequence: r.sequenceNumber.parsed } : {}),
      row: r.changeType === 'DELETE' ? null : r.row,
    });
    return true;
  }

  /** The rows a reader sees, in ingestion order. */
  rows(): Row[] {
    const live: Array<{ ingest: number; row: Row }> = [...this.plain];
    for (const s of this.keyed.values()) if (s.row) live.push({ ingest: s.ingest, row: s.row });
    return live.sort((a, b) => a.ingest - b.ingest).map((e) => e.row);
  }

  /** Rewrites one column of every stored row (a column's type was changed in place). */
  convertColumn(name: string, convert: (value: Row[string]) => Row[string]): void {
    const apply = (row: Row) => {
      if (name in row) row[name] = convert(row[name] ?? null);
    };
    for (const p of this.plain) apply(p.row);
    for (const s of this.keyed.values()) if (s.row) apply(s.row);
  }

  /** The applied state and history (persistence). */
  dump(): {
    plain: Array<{ ingest: number; row: Row }>;
    keyed: Array<[string, KeyState]>;
    history: Ingestion[];
  } {
    return { plain: this.plain, keyed: [...this.keyed.entries()], history: this.history };
  }

  /** Restores a dump; later ingestions keep counting after the restored ones. */
  restore(d: ReturnType<TableState['dump']>): void {
    this.plain = d.plain;
    this.keyed = new Map(d.keyed);
    this.history.splice(0, this.history.length, ...d.history);
    const last = Math.max(0, ...d.plain.map((p) => p.ingest), ...d.keyed.map(([, s]) => s.ingest));
    if (last > ingestCounter) ingestCounter = last;
  }

  /** Drops everything (table deleted or truncated). */
  clear(): void {
    this.plain = [];
    this.keyed.clear();
    this.history.length = 0;
  }
}

/**
 * Whether an incoming change beats the current one for its key: the larger sequence number wins; on a tie,
 * or when either side has none, the later ingestion (the incoming one) wins.
 */
function newer(incoming: SequenceNumber | undefined, current: SequenceNumber | undefined): boolean {
  if (!incoming || !current) return true;
  return compareSequenceNumbers(incoming, current) >= 0;
}
