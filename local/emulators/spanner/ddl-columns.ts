/**
 * Column DDL: ADD COLUMN (a generated one is computed for every stored row), DROP COLUMN and ALTER COLUMN
 * (type, length, NOT NULL, allow_commit_timestamp), with the service's checks and messages. A type change
 * writes a new physical column, so reads at earlier timestamps keep their values and type.
 */
import { constraintsUsing } from './constraints';
import type { ColumnChange } from './ddl-parse';
import { type Generator, referencedColumns } from './generated';
import { Code, SpannerError, type SpannerTypeJson, type WireValue } from './hooks';
import type { Column, Schema, Table } from './schema';
import type { Storage } from './storage';
import { type ColumnType, spannerTypeName, typeLabel } from './types';
import { type StoredValue, storedToWire, wireToStored } from './values';

const FAR_FUTURE = 9_000_000_000_000_000_000n;

function precondition(message: string): never {
  throw new SpannerError(Code.FAILED_PRECONDITION, message);
}

function invalid(message: string): never {
  throw new SpannerError(Code.INVALID_ARGUMENT, message);
}

/** Rejects a non-stored generated column declared NOT NULL, as the service does. */
export function checkGeneratedColumn(c: Column): void {
  if (c.generated && !c.generated.stored && !c.nullable && c.ct.type.code !== 'TOKENLIST')
    invalid(`Generated column \`${c.name}\` that are not marked as STORED cannot be specified as NOT NULL.`);
}

/** ALTER TABLE … ADD COLUMN. */
export function addColumn(schema: Schema, storage: Storage, gen: Generator, table: string, column: Column) {
  const t = schema.get(table);
  if (t.columns.some((c) => c.name.toLowerCase() === column.name.toLowerCase()))
    precondition(`Duplicate column name ${t.name}.${column.name}.`);
  if (!column.nullable && !column.generated)
    precondition(`Cannot add NOT NULL column ${t.name}.${column.name} to existing table ${t.name}.`);
  checkGeneratedColumn(column);
  t.columns.push(column);
  try {
    if (column.generated) gen.validate(t);
  } catch (err) {
    t.columns.pop();
    throw err;
  }
  storage.addColumn(t, column);
  if (!column.generated) return;
  // The service backfills a new generated column for every existing row (without change records).
  for (const { rowid, row } of storage.versions(t)) {
    gen.fill(t, row);
    storage.setValue(t, rowid, column, row[column.name] ?? null);
  }
}

/** ALTER TABLE … DROP COLUMN (the physical column stays for reads at earlier timestamps). */
export function dropColumn(schema: Schema, table: string, column: string): void {
  const t = schema.get(table);
  const c = schema.column(t, column);
  if (t.primaryKey.some((k) => k.name === c.name)) precondition(`Cannot drop key column ${c.name}.`);
  if (schema.indexesOf(t.name).some((i) => [...i.keys.map((k) => k.name), ...i.storing].includes(c.name)))
    precondition(`Cannot drop column ${c.name} that is used by an index.`);
  const dependent = t.columns.find((g) => g.generated && referencedColumns(schema, t, g).includes(c));
  if (dependent)
    precondition(
      `Cannot drop column \`${c.name}\` from table \`${t.name}\` because it is referenced by generated column \`${dependent.name}\`.`,
    );
  const used = constraintsUsing(schema, t, c.name);
  if (used.length) precondition(`Cannot drop column ${c.name}: constraints ${used.join(', ')} use it.`);
  t.columns = t.columns.filter((x) => x !== c);
}

function sameType(a: SpannerTypeJson, b: SpannerTypeJson): boolean {
  if (a.code !== b.code || (a.typeAnnotation ?? '') !== (b.typeAnnotation ?? '')) return false;
  if ((a.protoTypeFqn ?? '') !== (b.protoTypeFqn ?? '')) return false;
  if (a.code !== 'ARRAY') return true;
  return sameType(a.arrayElementType as SpannerTypeJson, b.arrayElementType as SpannerTypeJson);
}

function baseOf(t: SpannerTypeJson): SpannerTypeJson {
  return t.code === 'ARRAY' ? (t.arrayElementType as SpannerTypeJson) : t;
}

/** Type pairs that keep their wire form: a PROTO is its bytes, an ENUM its number. */
const SAME_WIRE: Array<[string, string]> = [
  ['BYTES', 'PROTO'],
  ['INT64', 'ENUM'],
];

function sameWire(a: SpannerTypeJson, b: SpannerTypeJson): boolean {
  return SAME_WIRE.some(([x, y]) => (a.code === x && b.code === y) || (a.code === y && b.code === x));
}

/**
 * The type changes the service allows: same type (any length), STRING ↔ BYTES, BYTES ↔ PROTO and
 * INT64 ↔ ENUM (arrays element-wise).
 */
function allowedTypeChange(from: SpannerTypeJson, to: SpannerTypeJson): boolean {
  if ((from.code === 'ARRAY') !== (to.code === 'ARRAY')) return false;
  const [a, b] = [baseOf(from), baseOf(to)];
  if (sameType(a, b) || sameWire(a, b)) return true;
  return (a.code === 'STRING' && b.code === 'BYTES') || (a.code === 'BYTES' && b.code === 'STRING');
}

/** Converts one wire value between STRING (text) and BYTES (base64); arrays element-wise. */
function convertWire(w: WireValue, from: SpannerTypeJson, to: SpannerTypeJson): WireValue {
  if (w === null) return null;
  if (Array.isArray(w)) return w.map((x) => convertWire(x, baseOf(from), baseOf(to)));
  if (from.code === to.code || sameWire(from, to)) return w;
  if (to.code === 'BYTES') return Buffer.from(String(w), 'utf8').toString('base64');
  return Buffer.from(String(w), 'base64').toString('utf8');
}

function lengthOf(w: WireValue, type: SpannerTypeJson): number[] {
  if (w === null) return [];
  if (Array.isArray(w)) return w.flatMap((x) => lengthOf(x, baseOf(type)));
  if (type.code === 'BYTES' || type.code === 'PROTO') return [Buffer.from(String(w), 'base64').length];
  return [[...String(w)].length];
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** True when every BYTES value (base64 wire form) of `w` is valid UTF-8. */
function validUtf8(w: WireValue): boolean {
  if (w === null) return true;
  if (Array.isArray(w)) return w.every(validUtf8);
  try {
    UTF8.decode(Buffer.from(String(w), 'base64'));
    return true;
  } catch {
    return false;
  }
}

/** Checks the current rows against a new type / length, with the service's messages. */
function verifyValues(storage: Storage, t: Table, c: Column, next: ColumnType): void {
  const from = c.ct.type;
  for (const { key, value } of storage.currentValues(t, c, FAR_FUTURE)) {
    const wire = storedToWire(value, from);
    if (baseOf(from).code === 'BYTES' && baseOf(next.type).code === 'STRING' && !validUtf8(wire))
      precondition(
        `Alteration of column ${c.name} is not allowed because it has an invalid UTF-8 character at key: ${key}`,
      );
    const converted = convertWire(wire, from, next.type);
    const max = next.length;
    const longest = Math.max(0, ...lengthOf(converted, next.type));
    if (max !== undefined && longest > max)
      precondition(
        `Reducing the length of column ${c.name} to ${max} is not allowed because it has a value of length ${longest} at key: ${key}`,
      );
  }
}

function changeType(schema: Schema, storage: Storage, t: Table, c: Column, next: ColumnType): Column {
  if (!allowedTypeChange(c.ct.type, next.type))
    invalid(
      `Cannot change type of column \`${c.name}\` from \`${typeLabel(c.ct.type)}\` to \`${typeLabel(next.type)}\``,
    );
  if (c.generated)
    invalid(`Cannot change the data type of a stored generated column \`${t.name}.${c.name}\`.`);
  const dependent = t.columns.find((g) => g.generated && referencedColumns(schema, t, g).includes(c));
  if (dependent && !sameType(c.ct.type, next.type))
    precondition(
      `Cannot change the data type of column \`${c.name}\`, which has a dependent stored generated column.`,
    );
  verifyValues(storage, t, c, next);
  const ct: ColumnType = { ...next, allowCommitTimestamp: c.ct.allowCommitTimestamp };
  if (sameType(c.ct.type, next.type)) {
    c.ct = ct;
    return c;
  }
  const replaced: Column = { ...c, ct };
  storage.addColumn(t, replaced);
  const convert = (v: StoredValue) =>
    wireToStored(convertWire(storedToWire(v, c.ct.type), c.ct.type, ct.type), ct.type);
  storage.copyColumn(t, c, replaced, convert);
  t.columns = t.columns.map((x) => (x === c ? replaced : x));
  return replaced;
}

/** ALTER TABLE … ALTER COLUMN. */
export function alterColumn(
  schema: Schema,
  storage: Storage,
  table: string,
  column: string,
  ch: ColumnChange,
) {
  const t = schema.get(table);
  let c = schema.column(t, column);
  const isKey = t.primaryKey.some((k) => k.name === c.name);
  if (ch.type) {
    if (isKey && !sameType(c.ct.type, ch.type.type))
      precondition(`Cannot change the type of key column ${t.name}.${c.name}.`);
    c = changeType(schema, storage, t, c, ch.type);
  }
  if (ch.nullable === false && c.nullable) {
    const nulls = storage.currentValues(t, c, FAR_FUTURE).find((v) => v.value === null);
    if (nulls)
      precondition(
        `Adding a NOT NULL constraint on a column ${c.name} is not allowed because it has a NULL value at key: ${nulls.key}`,
      );
  }
  if (ch.nullable !== undefined) c.nullable = ch.nullable;
  if (ch.allowCommitTimestamp !== undefined) {
    if (c.ct.type.code !== 'TIMESTAMP')
      invalid(
        `Column ${c.name} of type ${spannerTypeName(c.ct, schema.dialect)} cannot have allow_commit_timestamp`,
      );
    c.ct.allowCommitTimestamp = ch.allowCommitTimestamp;
  }
}
