/**
 * Applies parsed DDL to a database's schema and storage, with Spanner's validation errors.
 */
import { parseRetention } from './clock';
import { constraintsUsing, validateTableConstraints } from './constraints';
import type { DdlAction } from './ddl-parse';
import { Code, SpannerError } from './hooks';
import type { Schema } from './schema';
import type { Storage } from './storage';

function precondition(message: string): never {
  throw new SpannerError(Code.FAILED_PRECONDITION, message);
}

function createTable(schema: Schema, storage: Storage, a: Extract<DdlAction, { kind: 'createTable' }>): void {
  const t = a.table;
  if (schema.find(t.name) || schema.indexesByName.has(t.name.toLowerCase())) {
    if (a.ifNotExists) return;
    precondition(`Duplicate name in schema: ${t.name}.`);
  }
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

function dropTable(schema: Schema, storage: Storage, a: Extract<DdlAction, { kind: 'dropTable' }>): void {
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
  schema.tablesByName.delete(t.name.toLowerCase());
  storage.drop(t.name);
}

/** Applies one statement (already offered to the change-stream engine). */
export function applyDdl(schema: Schema, storage: Storage, a: DdlAction): void {
  switch (a.kind) {
    case 'createTable':
      createTable(schema, storage, a);
      return;
    case 'createIndex':
      createIndex(schema, a);
      return;
    case 'dropTable':
      dropTable(schema, storage, a);
      return;
    case 'dropIndex':
      if (!schema.indexesByName.delete(a.name.toLowerCase()) && !a.ifExists)
        throw new SpannerError(Code.NOT_FOUND, `Index not found: ${a.name}`);
      return;
    case 'addColumn': {
      const t = schema.get(a.table);
      if (t.columns.some((c) => c.name.toLowerCase() === a.column.name.toLowerCase()))
        precondition(`Duplicate column name ${t.name}.${a.column.name}.`);
      if (!a.column.nullable)
        precondition(`Cannot add NOT NULL column ${t.name}.${a.column.name} to existing table ${t.name}.`);
      t.columns.push(a.column);
      storage.addColumn(t.name, a.column.name);
      return;
    }
    case 'dropColumn': {
      const t = schema.get(a.table);
      const c = schema.column(t, a.column);
      if (t.primaryKey.some((k) => k.name === c.name)) precondition(`Cannot drop key column ${c.name}.`);
      if (schema.indexesOf(t.name).some((i) => [...i.keys.map((k) => k.name), ...i.storing].includes(c.name)))
        precondition(`Cannot drop column ${c.name} that is used by an index.`);
      const used = constraintsUsing(schema, t, c.name);
      if (used.length) precondition(`Cannot drop column ${c.name}: constraints ${used.join(', ')} use it.`);
      t.columns = t.columns.filter((x) => x !== c);
      storage.dropColumn(t.name, c.name);
      return;
    }
    case 'setOption':
      try {
        const ns = parseRetention(a.value);
        if (ns < 3600n * 1_000_000_000n || ns > 7n * 86400n * 1_000_000_000n) throw new Error('range');
      } catch {
        throw new SpannerError(
          Code.INVALID_ARGUMENT,
          `Invalid version_retention_period: ${a.value}. Must be between 1h and 7d.`,
        );
      }
      schema.options.set(a.name, a.value);
  }
}
