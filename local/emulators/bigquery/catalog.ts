/**
 * The emulator's catalog: projects → datasets → tables, each table with its schema, the REST metadata it was
 * created with (primary key, max staleness, partitioning, clustering pass through) and its applied contents.
 */
import type { Field } from './schema';
import { TableState } from './table-state';
import type { Row } from './values';

/** Error with an HTTP status and Google `reason`, rendered in the Google JSON error format by REST. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** A table's identity. */
export interface TableRef {
  projectId: string;
  datasetId: string;
  tableId: string;
}

/** One dataset. */
export interface Dataset {
  projectId: string;
  datasetId: string;
  creationTime: number;
  metadata: Record<string, unknown>;
  tables: Map<string, Table>;
}

/** A logical view: a stored GoogleSQL query, run whenever the view is queried. */
export interface ViewDefinition {
  query: string;
}

/** One table, or a view (then `view` is set, `fields` is the query's result schema and nothing is stored). */
export class Table {
  fields: Field[];
  /** Set for a view. */
  view?: ViewDefinition;
  /** REST metadata other than the schema and the reference (passed through as given, patched in place). */
  metadata: Record<string, unknown>;
  creationTimeMs = Date.now();
  readonly state: TableState;
  /** Bumped on every schema change so open AppendRows connections report `updated_schema`. */
  schemaVersion = 1;

  constructor(
    readonly ref: TableRef,
    fields: Field[],
    metadata: Record<string, unknown>,
  ) {
    this.fields = fields;
    this.metadata = metadata;
    this.state = new TableState(() => this.primaryKey());
  }

  /** `tableConstraints.primaryKey.columns`, when declared. */
  primaryKey(): string[] | undefined {
    const constraints = this.metadata.tableConstraints as { primaryKey?: { columns?: unknown } } | undefined;
    const cols = constraints?.primaryKey?.columns;
    return Array.isArray(cols) && cols.length > 0 ? cols.map(String) : undefined;
  }

  /** Applied rows with every current column present (columns added later read as NULL in older rows). */
  rows(): Row[] {
    return this.state
      .rows()
      .map((r) => Object.fromEntries(this.fields.map((f) => [f.name, r[f.name] ?? null])));
  }

  /** The resource path used by the Storage Write API. */
  path(): string {
    return `projects/${this.ref.projectId}/datasets/${this.ref.datasetId}/tables/${this.ref.tableId}`;
  }
}

/** A change to datasets or tables (persistence journals these). */
export type CatalogChange =
  | { k: 'dataset'; ds: Dataset }
  | { k: 'datasetDeleted'; projectId: string; datasetId: string }
  | { k: 'table'; t: Table }
  | { k: 'tableDeleted'; ref: TableRef }
  | { k: 'columnType'; ref: TableRef; column: string; to: string };

/** All datasets of all projects. */
export class Catalog {
  private datasets = new Map<string, Dataset>();
  /** Called after every change (persistence). */
  onChange?: (change: CatalogChange) => void;

  /** Reports a change made to a table in place (schema or metadata patch). */
  tableChanged(t: Table): void {
    this.onChange?.({ k: 'table', t });
  }

  /** Reports a column whose type was changed in place, its stored values converted. */
  columnTypeChanged(t: Table, column: string, to: string): void {
    this.onChange?.({ k: 'columnType', ref: t.ref, column, to });
  }

  /** Every dataset (persistence). */
  all(): Dataset[] {
    return [...this.datasets.values()];
  }

  /** Adds a dataset as it was saved (persistence). */
  putDataset(ds: Dataset): void {
    this.datasets.set(Catalog.key(ds.projectId, ds.datasetId), ds);
  }

  private static key(projectId: string, datasetId: string): string {
    return `${projectId}/${datasetId}`;
  }

  createDataset(projectId: string, datasetId: string, metadata: Record<string, unknown>): Dataset {
    const key = Catalog.key(projectId, datasetId);
    if (this.datasets.has(key))
      throw new ApiError(409, 'duplicate', `Already Exists: Dataset ${key.replace('/', ':')}`);
    const ds: Dataset = { projectId, datasetId, creationTime: Date.now(), metadata, tables: new Map() };
    this.datasets.set(key, ds);
    this.onChange?.({ k: 'dataset', ds });
    return ds;
  }

  dataset(projectId: string, datasetId: string): Dataset {
    const ds = this.datasets.get(Catalog.key(projectId, datasetId));
    if (!ds) throw new ApiError(404, 'notFound', `Not found: Dataset ${projectId}:${datasetId}`);
    return ds;
  }

  listDatasets(projectId: string): Dataset[] {
    return [...this.datasets.values()].filter((d) => d.projectId === projectId);
  }

  deleteDataset(projectId: string, datasetId: string, deleteContents: boolean): void {
    const ds = this.dataset(projectId, datasetId);
    if (ds.tables.size > 0 && !deleteContents) {
      throw new ApiError(400, 'resourceInUse', `Dataset ${projectId}:${datasetId} is still in use`);
    }
    this.datasets.delete(Catalog.key(projectId, datasetId));
    this.onChange?.({ k: 'datasetDeleted', projectId, datasetId });
  }

  createTable(
    ref: TableRef,
    fields: Field[],
    metadata: Record<string, unknown>,
    view?: ViewDefinition,
  ): Table {
    const ds = this.dataset(ref.projectId, ref.datasetId);
    if (ds.tables.has(ref.tableId)) {
      throw new ApiError(
        409,
        'duplicate',
        `Already Exists: Table ${ref.projectId}:${ref.datasetId}.${ref.tableId}`,
      );
    }
    const table = new Table(ref, fields, metadata);
    if (view) table.view = view;
    ds.tables.set(ref.tableId, table);
    this.onChange?.({ k: 'table', t: table });
    return table;
  }

  table(ref: TableRef): Table {
    const t = this.dataset(ref.projectId, ref.datasetId).tables.get(ref.tableId);
    if (!t)
      throw new ApiError(
        404,
        'notFound',
        `Not found: Table ${ref.projectId}:${ref.datasetId}.${ref.tableId}`,
      );
    return t;
  }

  deleteTable(ref: TableRef): void {
    this.table(ref);
    this.dataset(ref.projectId, ref.datasetId).tables.delete(ref.tableId);
    this.onChange?.({ k: 'tableDeleted', ref });
  }

  /** Resolves `projects/p/datasets/d/tables/t[/…]` to a table, or undefined when absent or malformed. */
  tableByPath(path: string): Table | undefined {
    const m = /^projects\/([^/]+)\/datasets\/([^/]+)\/tables\/([^/]+)/.exec(path);
    if (!m) return undefined;
    return this.datasets.get(Catalog.key(m[1]!, m[2]!))?.tables.get(m[3]!);
  }
}
