/**
 * How one source table is replicated (its plan), and schema drift: the difference between what a change
 * record (or a read at its commit timestamp) carries and what the plan knows.
 *
 * The replica carries the key, the columns the stream watches and — when the stream watches the table whole —
 * its stored generated columns, which the stream never carries and which are therefore read at the commit
 * timestamp. Hidden columns (TOKENLIST) and non-stored generated columns are left out. Drift is detected from
 * the records themselves: a record's `column_types` is compared with the plan, which costs a few map lookups
 * per record and no read while nothing changed (ADR-1301).
 */
import type { DataChangeRecord, SpannerType } from './change-record';
import { SluiceError } from './errors';
import type { TableColumn, TableSchema } from './information-schema';

/** The replication plan of one source table. */
export interface ReplicaPlan {
  table: string;
  schema: TableSchema;
  /** The columns the stream watches (`all`, or the watched non-key columns). */
  watched: 'all' | string[];
  /** Replicated columns by name, in ordinal order. */
  columns: Map<string, TableColumn>;
  /** Key columns, in key order. */
  keys: TableColumn[];
  /** Replicated columns the stream never carries (stored generated): every upsert reads them at commit. */
  readAtCommit: string[];
  /** Columns left out on purpose (hidden, non-stored generated, unwatched): ignored wherever they appear. */
  ignored: Set<string>;
}

/** Why a column is not replicated, or undefined when it is. */
export function exclusionOf(c: TableColumn, isKey: boolean, watched: 'all' | string[]): string | undefined {
  if (c.hidden) return 'hidden';
  if (c.generated === 'virtual') return 'generated, not stored';
  if (isKey) return undefined;
  if (watched === 'all') return undefined;
  if (c.generated === 'stored') return 'generated (the stream watches a column list)';
  return watched.includes(c.name) ? undefined : 'not watched by the stream';
}

/** The plan of a table from its schema and the stream's watch list. */
export function planReplica(schema: TableSchema, watched: 'all' | string[]): ReplicaPlan {
  const keys = new Set(schema.primaryKey);
  const columns = new Map<string, TableColumn>();
  const ignored = new Set<string>();
  const readAtCommit: string[] = [];
  for (const c of schema.columns) {
    const isKey = keys.has(c.name);
    if (exclusionOf(c, isKey, watched) !== undefined) {
      ignored.add(c.name);
      continue;
    }
    if (c.unknownType !== undefined)
      throw new SluiceError(
        'permanent',
        `column ${schema.name}.${c.name} has Spanner type ${c.unknownType}, which sluice cannot replicate to BigQuery: drop or change the column, or leave the table out of SLUICE_TABLES ("${schema.name}": false)`,
      );
    columns.set(c.name, c);
    if (c.generated === 'stored' && !isKey) readAtCommit.push(c.name);
  }
  const keyColumns = schema.primaryKey.map((k) => {
    const c = columns.get(k);
    if (!c) throw new Error(`table ${schema.name}: key column ${k} is not among its columns`);
    return c;
  });
  return { table: schema.name, schema, watched, columns, keys: keyColumns, readAtCommit, ignored };
}

/** True when two Spanner types are the same (code, annotation, element type). */
export function sameType(a: SpannerType, b: SpannerType): boolean {
  if (a.code !== b.code || a.typeAnnotation !== b.typeAnnotation || a.protoTypeFqn !== b.protoTypeFqn)
    return false;
  if (a.arrayElementType === undefined || b.arrayElementType === undefined)
    return a.arrayElementType === b.arrayElementType;
  return sameType(a.arrayElementType, b.arrayElementType);
}

/** A difference between a record (or a read) and the plan. */
export type Drift =
  | { kind: 'added'; column: string; type: SpannerType }
  | { kind: 'type-changed'; column: string; from: SpannerType; to: SpannerType };

/** Compares named column types with the plan; empty when the plan knows every column with its type. */
export function columnDrift(
  plan: ReplicaPlan,
  columns: ReadonlyArray<{ name: string; type: SpannerType }>,
): Drift[] {
  let drift: Drift[] = NO_DRIFT;
  for (const c of columns) {
    const known = plan.columns.get(c.name);
    let d: Drift | undefined;
    if (!known) {
      if (!plan.ignored.has(c.name)) d = { kind: 'added', column: c.name, type: c.type };
    } else if (!sameType(known.type, c.type))
      d = { kind: 'type-changed', column: c.name, from: known.type, to: c.type };
    if (d) drift = drift === NO_DRIFT ? [d] : [...drift, d];
  }
  return drift;
}

const NO_DRIFT: Drift[] = [];

/**
 * The first record of `records` (in the order given) whose `column_types` differ from the plan, with the
 * drift; undefined when none does (the common case: a map lookup and a type comparison per column).
 */
export function firstDrift(
  plan: ReplicaPlan,
  records: readonly DataChangeRecord[],
): { record: DataChangeRecord; drift: Drift[] } | undefined {
  for (const record of records) {
    const drift = columnDrift(plan, record.columnTypes);
    if (drift.length > 0) return { record, drift };
  }
  return undefined;
}
