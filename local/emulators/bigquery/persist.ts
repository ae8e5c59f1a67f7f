/**
 * BigQuery state on disk (`--data-dir`): datasets, tables (schema, metadata, applied rows with their CDC
 * state and ingestion history) and explicit write streams (rows, finalization, commit), as a snapshot plus a
 * journal of changes: whole datasets / tables / stream states, rows appended to a stream, rows ingested on a
 * `_default` stream. Replaying the journal repeats the same ingestions in the same order.
 */
import { Journal } from '../common/journal';
import {
  type Catalog,
  type CatalogChange,
  type Dataset,
  Table,
  type TableRef,
  type ViewDefinition,
} from './catalog';
import { changeColumnType } from './ddl';
import type { Field } from './schema';
import type { IncomingRow, TableState } from './table-state';
import type { StreamChange, StreamType, WriteStreamState, WriteStreams } from './write-streams';

interface TableRecord {
  ref: TableRef;
  fields: Field[];
  metadata: Record<string, unknown>;
  creationTimeMs: number;
  schemaVersion: number;
  /** Set for a view (its stored query). */
  view?: ViewDefinition;
}
interface StreamRecord {
  name: string;
  ref: TableRef;
  type: StreamType;
  createTimeNs: bigint;
  commitTimeNs?: bigint;
  finalized: boolean;
  visible: number;
}
interface Snapshot {
  datasets: Array<Omit<Dataset, 'tables'>>;
  tables: Array<TableRecord & { state: ReturnType<TableState['dump']> }>;
  streams: Array<StreamRecord & { rows: IncomingRow[] }>;
}
type Event =
  | { k: 'dataset'; ds: Omit<Dataset, 'tables'> }
  | { k: 'datasetDeleted'; projectId: string; datasetId: string }
  | { k: 'table'; t: TableRecord }
  | { k: 'tableDeleted'; ref: TableRef }
  | { k: 'columnType'; ref: TableRef; column: string; to: string }
  | { k: 'stream'; s: StreamRecord }
  | { k: 'streamRows'; name: string; rows: IncomingRow[] }
  | { k: 'ingest'; ref: TableRef; stream: string; rows: IncomingRow[] };

function tableRecord(t: Table): TableRecord {
  return {
    ref: t.ref,
    fields: t.fields,
    metadata: t.metadata,
    creationTimeMs: t.creationTimeMs,
    schemaVersion: t.schemaVersion,
    ...(t.view ? { view: t.view } : {}),
  };
}

function streamRecord(s: WriteStreamState): StreamRecord {
  const { rows: _rows, table, ...rest } = s;
  return { ...rest, ref: table.ref };
}

function datasetRecord(ds: Dataset): Omit<Dataset, 'tables'> {
  const { tables: _tables, ...rest } = ds;
  return rest;
}

/** Keeps one emulator's catalog and streams in `dir`. */
export class BigQueryPersistence {
  private readonly journal: Journal<Snapshot, Event>;

  constructor(
    dir: string,
    private readonly catalog: Catalog,
    private readonly streams: WriteStreams,
  ) {
    this.journal = new Journal(dir);
  }

  private putTable(r: TableRecord): Table {
    const ds = this.catalog.dataset(r.ref.projectId, r.ref.datasetId);
    const existing = ds.tables.get(r.ref.tableId);
    const t = existing ?? new Table(r.ref, r.fields, r.metadata);
    Object.assign(t, {
      fields: r.fields,
      metadata: r.metadata,
      creationTimeMs: r.creationTimeMs,
      schemaVersion: r.schemaVersion,
    });
    if (r.view) t.view = r.view;
    ds.tables.set(r.ref.tableId, t);
    return t;
  }

  private putStream(r: StreamRecord, rows?: IncomingRow[]): void {
    const table = this.catalog.table(r.ref);
    const current = this.streams.all().find((s) => s.name === r.name);
    const s: WriteStreamState = current ?? { ...r, table, rows: [], visible: 0 };
    if (rows) s.rows = rows;
    Object.assign(s, {
      type: r.type,
      createTimeNs: r.createTimeNs,
      finalized: r.finalized,
      commitTimeNs: r.commitTimeNs,
    });
    this.streams.put(s);
    // Rows that became visible since the stream's last saved state are ingested now, in journal order.
    if (rows) s.visible = r.visible;
    else this.streams.publish(s, r.visible);
  }

  private apply(e: Event): void {
    switch (e.k) {
      case 'dataset':
        this.catalog.putDataset({ ...e.ds, tables: new Map() });
        return;
      case 'datasetDeleted':
        for (const t of this.catalog.dataset(e.projectId, e.datasetId).tables.values())
          this.streams.dropTable(t);
        this.catalog.deleteDataset(e.projectId, e.datasetId, true);
        return;
      case 'table':
        this.putTable(e.t);
        return;
      case 'tableDeleted':
        this.streams.dropTable(this.catalog.table(e.ref));
        this.catalog.deleteTable(e.ref);
        return;
      case 'columnType':
        changeColumnType(this.catalog.table(e.ref), e.column, e.to);
        return;
      case 'stream':
        this.putStream(e.s);
        return;
      case 'streamRows': {
        const s = this.streams.all().find((x) => x.name === e.name);
        if (s) this.streams.append(s, e.rows);
        return;
      }
      default:
        this.catalog.table(e.ref).state.ingest(e.stream, e.rows);
    }
  }

  /** Loads the saved state, compacts it into a fresh snapshot, then journals every later change. */
  load(): void {
    const { snapshot, events } = this.journal.load();
    for (const ds of snapshot?.datasets ?? []) this.catalog.putDataset({ ...ds, tables: new Map() });
    for (const t of snapshot?.tables ?? []) this.putTable(t).state.restore(t.state);
    for (const s of snapshot?.streams ?? []) this.putStream(s, s.rows);
    for (const e of events) this.apply(e);
    this.journal.compact(this.snapshot());
    this.catalog.onChange = (c) => this.journal.append(this.catalogEvent(c));
    this.streams.onChange = (c) => this.journal.append(this.streamEvent(c));
  }

  private catalogEvent(c: CatalogChange): Event {
    if (c.k === 'dataset') return { k: 'dataset', ds: datasetRecord(c.ds) };
    if (c.k === 'table') return { k: 'table', t: tableRecord(c.t) };
    return c;
  }

  private streamEvent(c: StreamChange): Event {
    if (c.k === 'stream') return { k: 'stream', s: streamRecord(c.s) };
    if (c.k === 'ingest') return { k: 'ingest', ref: c.table.ref, stream: c.stream, rows: c.rows };
    return c;
  }

  private snapshot(): Snapshot {
    const datasets = this.catalog.all();
    return {
      datasets: datasets.map(datasetRecord),
      tables: datasets.flatMap((ds) =>
        [...ds.tables.values()].map((t) => ({ ...tableRecord(t), state: t.state.dump() })),
      ),
      streams: this.streams.all().map((s) => ({ ...streamRecord(s), rows: s.rows })),
    };
  }

  /** Flushes and closes the journal. */
  close(): void {
    this.catalog.onChange = undefined;
    this.streams.onChange = undefined;
    this.journal.close();
  }
}
