/**
 * Lineage of a pipeline and of its backfills as OpenLineage run events, from configuration and table schemas
 * only (no client, no credentials). Inputs are Spanner tables named as the Spanner connector names them
 * (namespace `spanner://<project>:<instance>`, name `<database>.<table>`), outputs the BigQuery replica and
 * history tables (namespace `bigquery`, name `<project>.<dataset>.<table>`); column lineage says which
 * source columns each destination column is computed from.
 */
import { createHash } from 'node:crypto';
import { defaultLookupPrefix, type LookupConfig } from '../enrichment/lookups';
import type { TableSchema } from '../information-schema';
import { formatSpannerType } from '../spanner-types';
import { formatTimestamp, type Timestamp } from '../timestamp';
import {
  type ColumnLineageFacet,
  type Dataset,
  FACET_SCHEMA_URLS,
  facetBase,
  type InputField,
  OPEN_LINEAGE_SCHEMA_URL,
  PRODUCER,
  type RunEvent,
  type RunEventType,
} from './open-lineage';

/** Where a pipeline reads and writes. */
export interface LineageScope {
  pipeline: string;
  project: string;
  instance: string;
  database: string;
  dataset: string;
}

/** One replicated source table: its schema, the columns the stream watches, and its destinations. */
export interface LineageTable {
  schema: TableSchema;
  watched: 'all' | string[];
  replica?: string | undefined;
  history?: string | undefined;
  /** The table's lookups: their brought columns are in both outputs, joined from the dimension table. */
  lookups?: readonly LookupConfig[] | undefined;
}

/** Which job a run belongs to. */
export type LineageJobKind = 'pipeline' | 'backfill';

/** What happened to the run, when, and (for FAIL) why. */
export interface RunTransition {
  eventType: RunEventType;
  at: Timestamp;
  runId: string;
  error?: string | undefined;
}

const BIGQUERY_NAMESPACE = 'bigquery';

/** Namespace of the pipeline's Spanner tables. */
export function spannerNamespace(scope: LineageScope): string {
  return `spanner://${scope.project}:${scope.instance}`;
}

/** The OpenLineage job of the replication pipeline or of its backfills. */
export function jobOf(scope: LineageScope, kind: LineageJobKind): RunEvent['job'] {
  const streaming = kind === 'pipeline';
  return {
    namespace: `sluice://${scope.project}`,
    name: streaming ? scope.pipeline : `${scope.pipeline}.backfill`,
    facets: {
      jobType: {
        ...facetBase(FACET_SCHEMA_URLS.jobType),
        processingType: streaming ? 'STREAMING' : 'BATCH',
        integration: 'SLUICE',
        jobType: streaming ? 'CHANGE_STREAM_REPLICATION' : 'SNAPSHOT_BACKFILL',
      },
    },
  };
}

// A fixed namespace for sluice's name-based run ids (RFC 9562 version 5).
const RUN_ID_NAMESPACE = Buffer.from('5b1c3e0a9f2d4c6b8e7a1d2c3b4a5f60', 'hex');

/** A UUID version 5 of `name`: the same run always gets the same id, whichever instance emits it. */
export function nameBasedUuid(name: string): string {
  const hash = createHash('sha1').update(RUN_ID_NAMESPACE).update(name, 'utf8').digest();
  const b = Buffer.from(hash.subarray(0, 16));
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x50;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Run id of one ledger epoch: a restarted ledger (new epoch) is a new run of the pipeline job. */
export function pipelineRunId(scope: LineageScope, epoch: number, start: Timestamp): string {
  return nameBasedUuid(`${scope.project}/${scope.pipeline}/epoch/${epoch}/${formatTimestamp(start)}`);
}

/** Run id of one backfill job (its id and snapshot timestamp identify it). */
export function backfillRunId(scope: LineageScope, job: string, snapshot: Timestamp): string {
  return nameBasedUuid(`${scope.project}/${scope.pipeline}/backfill/${job}/${formatTimestamp(snapshot)}`);
}

/** The key plus the watched columns, in ordinal order (what the replica carries). */
function replicatedColumns(table: LineageTable): string[] {
  const { schema, watched } = table;
  if (watched === 'all') return schema.columns.map((c) => c.name);
  const keep = new Set([...watched, ...schema.primaryKey]);
  return schema.columns.filter((c) => keep.has(c.name)).map((c) => c.name);
}

function inputDataset(scope: LineageScope, table: LineageTable): Dataset {
  return {
    namespace: spannerNamespace(scope),
    name: `${scope.database}.${table.schema.name}`,
    facets: {
      schema: {
        ...facetBase(FACET_SCHEMA_URLS.schema),
        fields: table.schema.columns.map((c) => ({ name: c.name, type: formatSpannerType(c.type) })),
      },
    },
  };
}

type Transformation = InputField['transformations'][number];
const IDENTITY: Transformation = { type: 'DIRECT', subtype: 'IDENTITY' };
const PACKED: Transformation = {
  type: 'DIRECT',
  subtype: 'TRANSFORMATION',
  description: 'encoded into a JSON object keyed by column name',
};

/** Destination column → input fields, accumulated over every source table writing one destination. */
type ColumnMap = Map<string, InputField[]>;

function addField(map: ColumnMap, column: string, field: InputField): void {
  const list = map.get(column) ?? [];
  list.push(field);
  map.set(column, list);
}

function replicaColumns(scope: LineageScope, table: LineageTable, into: ColumnMap): void {
  const source = { namespace: spannerNamespace(scope), name: `${scope.database}.${table.schema.name}` };
  for (const column of replicatedColumns(table))
    addField(into, column, { ...source, field: column, transformations: [IDENTITY] });
}

const JOINED: Transformation = {
  type: 'INDIRECT',
  subtype: 'JOIN',
  description: 'primary-key lookup of the dimension table',
};

/**
 * The enriched columns of a table's lookups: each comes DIRECT/IDENTITY from its dimension column and
 * INDIRECT/JOIN from every fact column of the join key.
 */
function enrichedColumns(scope: LineageScope, table: LineageTable, into: ColumnMap): void {
  const namespace = spannerNamespace(scope);
  const fact = { namespace, name: `${scope.database}.${table.schema.name}` };
  for (const l of table.lookups ?? []) {
    const dimension = { namespace, name: `${scope.database}.${l.table}` };
    const prefix = l.prefix ?? defaultLookupPrefix(l.table);
    for (const column of l.columns) {
      const target = `${prefix}${column}`;
      addField(into, target, { ...dimension, field: column, transformations: [IDENTITY] });
      for (const factColumn of Object.values(l.key))
        addField(into, target, { ...fact, field: factColumn, transformations: [JOINED] });
    }
  }
}

/** The dimension tables the lookups read, once each, after the fact tables (no schema facet: not read). */
function dimensionInputs(scope: LineageScope, tables: LineageTable[]): Dataset[] {
  const facts = new Set(tables.map((t) => t.schema.name));
  const names = [...new Set(tables.flatMap((t) => (t.lookups ?? []).map((l) => l.table)))];
  return names
    .filter((n) => !facts.has(n))
    .map((n) => ({ namespace: spannerNamespace(scope), name: `${scope.database}.${n}` }));
}

function historyColumns(scope: LineageScope, table: LineageTable, into: ColumnMap): void {
  const source = { namespace: spannerNamespace(scope), name: `${scope.database}.${table.schema.name}` };
  const keys = new Set(table.schema.primaryKey);
  for (const column of table.schema.primaryKey)
    addField(into, 'keys', { ...source, field: column, transformations: [PACKED] });
  for (const column of replicatedColumns(table).filter((c) => !keys.has(c))) {
    addField(into, 'new_values', { ...source, field: column, transformations: [PACKED] });
    addField(into, 'old_values', { ...source, field: column, transformations: [PACKED] });
  }
}

function outputDatasets(scope: LineageScope, tables: LineageTable[]): Dataset[] {
  // Several source tables may share one history table: one output dataset each, column lineage merged.
  const outputs = new Map<string, ColumnMap>();
  const mapOf = (table: string) => {
    const name = `${scope.project}.${scope.dataset}.${table}`;
    const map = outputs.get(name) ?? new Map();
    outputs.set(name, map);
    return map;
  };
  for (const t of tables) {
    if (t.replica) replicaColumns(scope, t, mapOf(t.replica));
    if (t.history) historyColumns(scope, t, mapOf(t.history));
    if (t.replica) enrichedColumns(scope, t, mapOf(t.replica));
    if (t.history) enrichedColumns(scope, t, mapOf(t.history));
  }
  return [...outputs].map(([name, columns]) => {
    const facet: ColumnLineageFacet = {
      ...facetBase(FACET_SCHEMA_URLS.columnLineage),
      fields: Object.fromEntries([...columns].map(([c, inputFields]) => [c, { inputFields }])),
    };
    return { namespace: BIGQUERY_NAMESPACE, name, facets: { columnLineage: facet } };
  });
}

/** One run event of `kind`'s job over `tables` (inputs and outputs in configuration order). */
export function runEvent(
  scope: LineageScope,
  kind: LineageJobKind,
  run: RunTransition,
  tables: LineageTable[],
): RunEvent {
  const facets =
    run.error === undefined
      ? undefined
      : {
          errorMessage: {
            ...facetBase(FACET_SCHEMA_URLS.errorMessage),
            message: run.error,
            programmingLanguage: 'TypeScript',
          },
        };
  return {
    eventType: run.eventType,
    eventTime: formatTimestamp(run.at),
    producer: PRODUCER,
    schemaURL: OPEN_LINEAGE_SCHEMA_URL,
    run: { runId: run.runId, ...(facets ? { facets } : {}) },
    job: jobOf(scope, kind),
    inputs: [...tables.map((t) => inputDataset(scope, t)), ...dimensionInputs(scope, tables)],
    outputs: outputDatasets(scope, tables),
  };
}

/** One edge of the lineage graph, for a terminal or a log line: `source column → destination column`. */
export interface LineageEdge {
  source: string;
  target: string;
}

/** The column-level edges of an event, `namespace/name.field`-style, in a stable order. */
export function edgesOf(event: RunEvent): LineageEdge[] {
  const edges: LineageEdge[] = [];
  for (const out of event.outputs) {
    for (const [column, { inputFields }] of Object.entries(out.facets?.columnLineage?.fields ?? {})) {
      for (const f of inputFields)
        edges.push({ source: `${f.name}.${f.field}`, target: `${out.name}.${column}` });
    }
  }
  return edges;
}
