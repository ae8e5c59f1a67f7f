/**
 * Decodes AppendRows payloads: compiles the writer's proto2 descriptor with protobufjs, maps proto fields to
 * table columns (honouring the `column_name` annotation for names that are not proto-safe), checks the
 * writer schema against the table, and turns serialized rows into typed rows or row errors.
 */
import * as protobuf from 'protobufjs';
import * as descriptorExt from 'protobufjs/ext/descriptor';
import type { Table } from './catalog';
import { type MissingValues, missingValue } from './defaults';
import { StorageErrorCode } from './protos';
import { type Field, findField } from './schema';
import { parseSequenceNumber } from './sequence';
import type { ChangeType, IncomingRow } from './table-state';
import { fromProtoValue, type Row, ValueError } from './values';
import { Code, WriteError } from './write-streams';

/** Pseudocolumns of BigQuery CDC. */
export const CHANGE_TYPE = '_CHANGE_TYPE';
export const CHANGE_SEQUENCE_NUMBER = '_CHANGE_SEQUENCE_NUMBER';

/** A compiled writer schema. */
export interface WriterSchema {
  type: protobuf.Type;
  /** Proto field name → column name. */
  columns: Map<string, string>;
}

/** A row-level failure, reported in `row_errors`. */
export interface RowFailure {
  index: number;
  message: string;
}

interface RawField {
  name?: string;
  options?: Record<string, unknown>;
}

function columnNameOption(options: Record<string, unknown> | undefined): string | undefined {
  if (!options) return undefined;
  for (const [k, v] of Object.entries(options)) {
    if (/column_?name\)?$/i.test(k) && typeof v === 'string') return v;
  }
  return undefined;
}

/** Compiles a `DescriptorProto` (as decoded by the loader) into a protobufjs type plus column mapping. */
export function compileWriterSchema(descriptor: unknown): WriterSchema {
  const desc = descriptor as { name?: string; field?: RawField[] };
  if (!desc?.name)
    throw new WriteError(Code.INVALID_ARGUMENT, 'Invalid proto schema: descriptor has no name');
  const columns = new Map<string, string>();
  for (const f of desc.field ?? []) {
    if (f.name) columns.set(f.name, columnNameOption(f.options) ?? f.name);
  }
  try {
    const set = descriptorExt.FileDescriptorSet.fromObject({
      file: [{ name: 'writer_schema.proto', syntax: 'proto2', messageType: [stripOptions(descriptor)] }],
    });
    const root = (protobuf.Root as unknown as { fromDescriptor(d: unknown): protobuf.Root }).fromDescriptor(
      set,
    );
    return { type: root.lookupType(desc.name), columns };
  } catch (err) {
    throw new WriteError(Code.INVALID_ARGUMENT, `Invalid proto schema: ${(err as Error).message}`);
  }
}

/** Drops field options recursively: extension options are not needed to decode and upset `fromObject`. */
function stripOptions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripOptions);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (k !== 'options') out[k] = stripOptions(v);
    return out;
  }
  return value;
}

/** Rejects writer schemas with columns the table lacks, or without one of its REQUIRED columns. */
export function checkWriterSchema(ws: WriterSchema, table: Table): void {
  const names = [...ws.columns.values()];
  const extra = names.filter(
    (c) => c !== CHANGE_TYPE && c !== CHANGE_SEQUENCE_NUMBER && !findField(table.fields, c),
  );
  if (extra.length > 0) {
    const e = new WriteError(
      Code.INVALID_ARGUMENT,
      `Input schema has more fields than BigQuery schema, extra fields: '${extra.join(',')}'. Schema mismatch due to extra fields in user schema. Entity: ${table.path()}`,
      StorageErrorCode.SCHEMA_MISMATCH_EXTRA_FIELDS,
      table.path(),
    );
    // The StorageError detail carries the short form the client's callers compare against.
    e.storageMessage = 'Schema mismatch due to extra fields in user schema';
    throw e;
  }
  const lower = new Set(names.map((n) => n.toLowerCase()));
  const missing = table.fields.filter(
    (f) =>
      f.mode === 'REQUIRED' && f.defaultValueExpression === undefined && !lower.has(f.name.toLowerCase()),
  );
  if (missing.length > 0) {
    throw new WriteError(
      Code.INVALID_ARGUMENT,
      `The proto field mismatched with BigQuery field at ${missing.map((f) => f.name).join(',')}, the proto field is missing while the BigQuery field is REQUIRED. Entity: ${table.path()}`,
    );
  }
}

/** Decodes every serialized row; returns the rows, or the failures when any row is bad (all-or-nothing). */
export function decodeRows(
  ws: WriterSchema,
  table: Table,
  serialized: Uint8Array[],
  mv: MissingValues = {},
): { rows: IncomingRow[]; failures: RowFailure[] } {
  const rows: IncomingRow[] = [];
  const failures: RowFailure[] = [];
  serialized.forEach((bytes, index) => {
    try {
      rows.push(decodeRow(ws, table, bytes, mv));
    } catch (err) {
      failures.push({ index, message: (err as Error).message });
    }
  });
  return { rows, failures };
}

function decodeRow(ws: WriterSchema, table: Table, bytes: Uint8Array, mv: MissingValues): IncomingRow {
  let obj: Record<string, unknown>;
  try {
    obj = ws.type.toObject(ws.type.decode(bytes), { longs: String, enums: String }) as Record<
      string,
      unknown
    >;
  } catch (err) {
    throw new ValueError(`Cannot parse the serialized row: ${(err as Error).message}`);
  }
  const row: Row = {};
  let changeType: ChangeType = 'INSERT';
  let sequenceNumber: IncomingRow['sequenceNumber'];
  const byColumn = new Map<string, unknown>();
  for (const [protoName, value] of Object.entries(obj))
    byColumn.set(ws.columns.get(protoName) ?? protoName, value);
  for (const [column, value] of byColumn) {
    if (column === CHANGE_TYPE) changeType = parseChangeType(value);
    else if (column === CHANGE_SEQUENCE_NUMBER) sequenceNumber = parseSequence(value);
  }
  for (const field of table.fields) row[field.name] = columnValue(byColumn, field, mv);
  return { row, changeType, ...(sequenceNumber ? { sequenceNumber } : {}) };
}

function columnValue(byColumn: Map<string, unknown>, field: Field, mv: MissingValues): Row[string] {
  let raw: unknown;
  let present = false;
  for (const [column, value] of byColumn)
    if (column.toLowerCase() === field.name.toLowerCase()) [raw, present] = [value, true];
  const value = present ? fromProtoValue(raw, field) : missingValue(field, mv);
  if (value === null && field.mode === 'REQUIRED') {
    throw new ValueError(`Required field ${field.name} is missing`);
  }
  return value;
}

function parseChangeType(value: unknown): ChangeType {
  if (value === 'UPSERT' || value === 'DELETE' || value === 'INSERT') return value;
  throw new ValueError(`The given value is not a valid CHANGE_TYPE: ${String(value)}`);
}

function parseSequence(value: unknown): IncomingRow['sequenceNumber'] {
  if (value === undefined || value === null) return undefined;
  const text = String(value);
  const parsed = parseSequenceNumber(text);
  if (!parsed) throw new ValueError(`Invalid _CHANGE_SEQUENCE_NUMBER value: ${text}`);
  return { text, parsed };
}
