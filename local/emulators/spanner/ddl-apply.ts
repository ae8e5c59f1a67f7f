/**
 * Applies parsed DDL to a database's schema and storage, with Spanner's validation errors.
 */
import { parseRetention } from './clock';
import { constraintsUsing, validateTableConstraints } from './constraints';
import { addColumn, alterColumn, checkGeneratedColumn, dropColumn } from './ddl-columns';
import type { DdlAction } from './ddl-parse';
import { applyProtoBundle, resolveColumns, resolveColumnType } from './ddl-protos';
import type { Generator } from './generated';
import { Code, SpannerError } from './hooks';
import { checkSchemaName, schemaOf } from './names';
import type { Schema } from './schema';
import type { Storage } from './storage';

function precondition(message: string): never {
  throw new SpannerError(Code.FAILED_PRECONDITION, message);
}

/** A name's schema must exist: NOT_FOUND `Schema not found: sch`, as the service answers. */
function requireSchema(schema: Schema, name: string): void {
  const named = schemaOf(name);
  if (named && !schema.namedSchemas.has(named.toLowerCase()))
    throw new SpannerError(Code.NOT_FOUND, `Schema not found: ${named}`);
}

function createSchema(schema: Schema, a: Extract<DdlAction, { kind: 'createSchema' }>): void {
  const key = a.name.toLowerCase();
  if (schema.namedSchemas.has(key) && a.ifNotExists) return;
  checkSchemaName(a.name);
  // Schemas share the database's one namespace with tables and indexes.
  if (schema.namedSchemas.has(key) || schema.find(a.name) || schema.indexesByName.has(key))
    precondition(`Duplicate name in schema: ${a.name}.`);
  schema.namedSchemas.set(key, a.name);
}

function dropSchema(schema: Schema, a: Extract<DdlAction, { kind: 'dropSchema' }>): void {
  const key = a.name.toLowerCase();
  const name = schema.namedSchemas.get(key);
  if (name === undefined) {
    if (a.ifExists) return;
    throw new SpannerError(Code.NOT_FOUND, `Schema not found: ${a.name}`);
  }
  const inSchema = (n: string) => schemaOf(n)?.toLowerCase() === key;
  const tables = [...schema.tablesByName.values()].map((t) => t.name).filter(inSchema);
  const indexes = [...schema.indexesByName.values()].map((i) => i.name).filter(inSchema);
  if (tables.length || indexes.length) {
    const lines = [
      ...(tables.length ? [`Dependent tables:${tables.join(', ')}`] : []),
      ...(indexes.length ? [`Dependent indexes:${indexes.join(', ')}`] : []),
    ];
    precondition(`Cannot drop schema ${name} while it has dependencies.\n${lines.join('\n')}`);
  }
  schema.namedSchemas.delete(key);
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
  requireSchema(schema, t.name);
  if (schema.namedSchemas.has(t.name.toLowerCase())) precondition(`Duplicate name in schema: ${t.name}.`);
  resolveColumns(schema, t.columns);
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
  requireSchema(schema, i.name);
  if (schema.namedSchemas.has(i.name.toLowerCase())) precondition(`Duplicate name in schema: ${i.name}.`);
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

/**
 * Applies one statement (already offered to the change-stream engine); `descriptors` are the request's
 * `proto_descriptors` (a serialized FileDescriptorSet), which CREATE / ALTER PROTO BUNDLE read.
 */
export function applyDdl(
  schema: Schema,
  storage: Storage,
  gen: Generator,
  a: DdlAction,
  descriptors?: Uint8Array,
): void {
  switch (a.kind) {
    case 'protoBundle':
      applyProtoBundle(schema, a, descriptors);
      return;
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
      resolveColumns(schema, [a.column]);
      addColumn(schema, storage, gen, a.table, a.column);
      return;
    case 'dropColumn':
      dropColumn(schema, a.table, a.column);
      return;
    case 'alterColumn': {
      const type = a.change.type && resolveColumnType(schema, a.change.type);
      alterColumn(schema, storage, a.table, a.column, type ? { ...a.change, type } : a.change);
      return;
    }
    case 'setOption':
      setOption(schema, a.name, a.value);
      return;
    case 'createSchema':
      createSchema(schema, a);
      return;
    case 'dropSchema':
      dropSchema(schema, a);
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
