/**
 * Typing a request's mutations by the table schema: every table and column must exist, every value must fit
 * its column's type, every write must carry the whole primary key and every delete exactly the key. The
 * typed mutation carries what batching needs: its index-aware cell count, its estimated bytes, and the
 * identity of the row it writes (for per-key ordering).
 */
import type { SpannerType } from '../change-record';
import { findColumn, findTable, type WriterCatalog, type WriterColumn, type WriterTable } from './catalog';
import type { MutationInput, MutationOp } from './request';
import { typeValue, type WireValue, wireBytes } from './values';

/** A mutation ready to send. */
export interface TypedMutation {
  /** Position in the request. */
  index: number;
  op: MutationOp;
  /** The table's name as the database spells it. */
  table: string;
  /** Written columns (for a delete: the key columns), as the database spells them. */
  columns: string[];
  /** Typed values, one per column (for a delete: the key). */
  values: WireValue[];
  types: SpannerType[];
  /** Identity of the row: table and canonical key. */
  rowKey: string;
  /** Mutation cells: one per written column plus one per secondary index containing it (a delete: 1 + indexes). */
  cells: number;
  /** Estimated bytes on the wire (names and values; BYTES as their base64 text). */
  bytes: number;
}

/** A typed mutation, or its problems; `schemaMiss` when a table or column was not found (the schema may be stale). */
export type TypedOutcome =
  | { ok: true; value: TypedMutation }
  | { ok: false; problems: string[]; schemaMiss: boolean };

function rowKey(table: string, key: WireValue[]): string {
  return `${table} ${JSON.stringify(key)}`;
}

/** A mutation's key as JSON (its {@link TypedMutation.rowKey} without the table): what finds its row. */
export function keyJson(m: Pick<TypedMutation, 'table' | 'rowKey'>): string {
  return m.rowKey.slice(m.table.length + 1);
}

function bytesOf(table: string, columns: string[], values: WireValue[]): number {
  return columns.reduce(
    (n, c, i) => n + Buffer.byteLength(c) + wireBytes(values[i] ?? null),
    Buffer.byteLength(table),
  );
}

function typeDelete(
  table: WriterTable,
  m: Extract<MutationInput, { op: 'delete' }>,
  path: string,
): TypedOutcome {
  const keyCols = table.primaryKey.map((k) => table.columns.find((c) => c.name === k) as WriterColumn);
  if (m.key.length !== keyCols.length)
    return {
      ok: false,
      schemaMiss: false,
      problems: [
        `${path}.key: table ${table.name} has a key of ${keyCols.length} column(s) (${table.primaryKey.join(', ')}), got ${m.key.length} value(s)`,
      ],
    };
  const problems: string[] = [];
  const values = keyCols.map((c, i) => {
    const typed = c.type
      ? typeValue(m.key[i], c.type)
      : {
          ok: false as const,
          problem: `key column ${c.name} has type ${c.typeName}, which the writer cannot write`,
        };
    if (typed.ok) return typed.value;
    problems.push(`${path}.key[${i}]: ${typed.problem}`);
    return null;
  });
  if (problems.length) return { ok: false, problems, schemaMiss: false };
  return {
    ok: true,
    value: {
      index: m.index,
      op: 'delete',
      table: table.name,
      columns: [...table.primaryKey],
      values,
      types: keyCols.map((c) => c.type as SpannerType),
      rowKey: rowKey(table.name, values),
      cells: 1 + table.indexes,
      bytes: bytesOf(table.name, [], values),
    },
  };
}

function typeColumn(
  column: WriterColumn | undefined,
  table: WriterTable,
  name: string,
  value: unknown,
  path: string,
) {
  if (!column)
    return {
      problem: `${path}.row.${name}: no column ${JSON.stringify(name)} in table ${table.name}`,
      miss: true,
    };
  if (column.generated)
    return { problem: `${path}.row.${name}: is a generated column (Spanner computes it)`, miss: false };
  if (!column.type)
    return {
      problem: `${path}.row.${name}: columns of type ${column.typeName} cannot be written by the writer`,
      miss: false,
    };
  const typed = typeValue(value, column.type);
  return typed.ok
    ? { column, value: typed.value }
    : { problem: `${path}.row.${name}: ${typed.problem}`, miss: false };
}

function typeWrite(
  catalog: WriterCatalog,
  table: WriterTable,
  m: Extract<MutationInput, { op: Exclude<MutationOp, 'delete'> }>,
  path: string,
): TypedOutcome {
  const problems: string[] = [];
  let schemaMiss = false;
  const columns: WriterColumn[] = [];
  const values: WireValue[] = [];
  const written = new Set<WriterColumn>();
  /** The names as the database spells them (a name without a column as sent). */
  const named = new Set<string>();
  for (const [name, raw] of Object.entries(m.row)) {
    const column = findColumn(catalog, table, name);
    named.add(column?.name ?? name);
    const t = typeColumn(column, table, name, raw, path);
    if ('problem' in t) {
      problems.push(t.problem as string);
      schemaMiss ||= t.miss === true;
    } else if (written.has(t.column))
      problems.push(`${path}.row.${name}: column ${t.column.name} is named twice`);
    else {
      written.add(t.column);
      columns.push(t.column);
      values.push(t.value);
    }
  }
  const missing = table.primaryKey.filter((k) => !named.has(k));
  if (missing.length && !schemaMiss)
    problems.push(`${path}.row: lacks primary-key column(s) ${missing.join(', ')}`);
  if (problems.length) return { ok: false, problems, schemaMiss };
  const names = columns.map((c) => c.name);
  const key = table.primaryKey.map((k) => values[names.indexOf(k)] ?? null);
  return {
    ok: true,
    value: {
      index: m.index,
      op: m.op,
      table: table.name,
      columns: names,
      values,
      types: columns.map((c) => c.type as SpannerType),
      rowKey: rowKey(table.name, key),
      cells: columns.reduce((n, c) => n + 1 + c.indexes, 0),
      bytes: bytesOf(table.name, names, values),
    },
  };
}

/** Types one mutation against the catalog. */
export function typeMutation(catalog: WriterCatalog, m: MutationInput): TypedOutcome {
  const path = `mutations[${m.index}]`;
  const table = findTable(catalog, m.table);
  if (!table)
    return {
      ok: false,
      problems: [`${path}.table: no table ${JSON.stringify(m.table)} in the database`],
      schemaMiss: true,
    };
  return m.op === 'delete' ? typeDelete(table, m, path) : typeWrite(catalog, table, m, path);
}

/** Types every mutation; all or nothing. */
export function typeMutations(
  catalog: WriterCatalog,
  mutations: MutationInput[],
): { ok: true; value: TypedMutation[] } | { ok: false; problems: string[]; schemaMiss: boolean } {
  const typed: TypedMutation[] = [];
  const problems: string[] = [];
  let schemaMiss = false;
  for (const m of mutations) {
    const t = typeMutation(catalog, m);
    if (t.ok) typed.push(t.value);
    else {
      problems.push(...t.problems);
      schemaMiss ||= t.schemaMiss;
    }
  }
  return problems.length ? { ok: false, problems, schemaMiss } : { ok: true, value: typed };
}
