/**
 * Applies parsed DDL to a database's schema and storage, with Spanner's validation errors.
 */
import { parseRetention } from './clock';
import { constraintsUsing, validateTableConstraints } from './constraints';
import { addColumn, alterColumn, checkGeneratedColumn, dropColumn } from './ddl-columns';
import type { DdlAction } from './ddl-parse';
import type { Generator } from './generated';
import { Code, SpannerError } from './hooks';
import type { Schema } from './schema';
import type { Storage } from './storage';

function precondition(message: string): never {
  throw new SpannerError(Code.FAILED_PRECONDITION, message);
}

function createTable(
  schema: Schema,
  storage: Storage,
  gen: Generator,
  a: Extract<DdlAction, { kind: 'createTable' }>,
): void {
  const t = a.table;
  if (schema.find(t.name) || schema.indexesByName.has(t.name.toLowerCase())) {
    if (a.ifNotExists) return;
    precondition(`Duplicate name in schema: ${t.name}.`);
  }
  for (const c of t.columns) checkGeneratedColumn(c);
  if (t.columns.some((c) => c.generated)) gen.validate(t);
  for (const k of t.primaryKey) {
    const col = t.columns.find((c) => c.name.toLowerCase() === k.name.toLowerCase());
    if (!col) precondition(`Table ${t.name} references nonexistent key column ${k.name}.`);
    k.name = col.name;
  }
  if (t.parent) {
    const parent = schema.get(t.parent);
    t.parent = parent.name;
    parent.primaryKey.forEach((k, i) => {
      if (t.primaryKey[i]?.name.toLowerCase() !== k.name.toLowerCase())
        precondition(`Table ${t.name} does not reference parent key column ${k.name}.`);
    });
  }
  validateTableConstraints(schema, t, storage.db);
  schema.tablesByName.set(t.name.toLowerCase(), t);
  storage.create(t);
}

function createIndex(schema: Schema, a: Extract<DdlAction, { kind: 'createIndex' }>): void {
  const i = a.index;
  if (schema.indexesByName.has(i.name.toLowerCase()) || schema.find(i.name)) {
    if (a.ifNotExists) return;
    precondition(`Duplicate name in schema: ${i.name}.`);
  }
  const t = schema.get(i.table);
  i.table = t.name;
  for (const k of [...i.keys, ...i.storing.map((name) => ({ name }))]) schema.column(t, k.name);
  i.keys = i.keys.map((k) => ({ ...k, name: schema.column(t, k.name).name }));
  i.storing = i.storing.map((s) => schema.column(t, s).name);
  schema.indexesByName.set(i.name.toLowerCase(), i);
}

function dropTable(schema: Schema, a: Extract<DdlAction, { kind: 'dropTable' }>): void {
  const t = schema.find(a.name);
  if (!t) {
    if (a.ifExists) return;
    throw new SpannerError(Code.NOT_FOUND, `Table not found: ${a.name}`);
  }
  const idx = schema.indexesOf(t.name).map((i) => i.name);
  if (idx.length) precondition(`Cannot drop table ${t.name} with indices: ${idx.join(', ')}.`);
  const children = [...schema.tablesByName.values()].filter((c) => c.parent === t.name).map((c) => c.name);
  if (children.length)
    precondition(`Cannot drop table ${t.name} with interleaved tables: ${children.join(', ')}.`);
  const fks = constraintsUsing(schema, t);
  if (fks.length)
    precondition(`Cannot drop table ${t.name}: it is referenced by foreign keys ${fks.join(', ')}.`);
  // The physical table stays: reads at timestamps before the drop still see the table.
  schema.tablesByName.delete(t.name.toLowerCase());
}

/** Applies one statement (already offered to the change-stream engine). */
export function applyDdl(schema: Schema, storage: Storage, gen: Generator, a: DdlAction): void {
  switch (a.kind) {
    case 'createTable':
      createTable(schema, storage, gen, a);
      return;
    case 'createIndex':
      createIndex(schema, a);
      return;
    case 'dropTable':
      dropTable(schema, a);
      return;
    case 'dropIndex':
      if (!schema.indexesByName.delete(a.name.toLowerCase()) && !a.ifExists)
        throw new SpannerError(Code.NOT_FOUND, `Index not found: ${a.name}`);
      return;
    case 'addColumn':
      addColumn(schema, storage, gen, a.table, a.column);
      return;
    case 'dropColumn':
      dropColumn(schema, a.table, a.column);
      return;
    case 'alterColumn':
      alterColumn(schema, storage, a.table, a.column, a.change);
      return;
    case 'setOption':
      setOption(schema, a.name, a.value);
  }
}

function setOption(schema: Schema, name: string, value: string): void {
  try {
    const ns = parseRetention(value);
    if (ns < 3600n * 1_000_000_000n || ns > 7n * 86400n * 1_000_000_000n) throw new Error('range');
  } catch {
    throw new SpannerError(
      Code.INVALID_ARGUMENT,
      `Invalid version_retention_period: ${value}. Must be between 1h and 7d.`,
    );
  }
  schema.options.set(name, value);
}
