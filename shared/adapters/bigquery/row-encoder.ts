/**
 * JSON-writer rows → serialized protobuf rows for the Storage Write API, from a protobufjs `Type` built once
 * per descriptor. The client's JSON writer deep-copies every row and, for each array value, looks its element
 * type up by a name that is not a message type (a thrown and caught error per array value); at tens of
 * thousands of rows per window that was the largest single cost of the sinks, and protobufjs's own encoding
 * (a message object per row, an `Op` per field, a `Long` per 64-bit value) the next. The conversions applied
 * here are the JSON writer's for the values a {@link WriterValue} can hold: names a proto field cannot carry
 * are replaced by the client's placeholder name, NULL is left out, a number bound for a string field (INT64,
 * NUMERIC, …) is written as its decimal text, decimal text bound for a 64-bit integer field (INT64,
 * TIMESTAMP micros) as that integer over its whole range, base64 text bound for BYTES as its bytes — inside
 * arrays too. A value for a column the descriptor lacks is an {@link UnknownFieldError}, never dropped.
 */
import { adapt, protos } from '@google-cloud/bigquery-storage';
import { Type } from 'protobufjs';
import type { WriterValue } from '../../domain/value-mapping';
import { WireWriter } from './wire-writer';

type Descriptor = protos.google.protobuf.IDescriptorProto;

/** A row for the JSON writer. */
export type JsonRow = Record<string, WriterValue>;

/** A replica change as the encoder takes it: the row, with BigQuery's CDC pseudo-columns beside it. */
export interface CdcRow {
  kind: 'upsert' | 'delete';
  row: JsonRow;
  sequence: string;
}

/**
 * Rows whose CDC pseudo-columns (`_CHANGE_TYPE`, `_CHANGE_SEQUENCE_NUMBER`) the encoder writes after each
 * row's own fields, instead of every row being copied once more to add them.
 */
export class CdcRows {
  constructor(readonly changes: readonly CdcRow[]) {}

  get length(): number {
    return this.changes.length;
  }
}

/** What one append encodes: plain rows, or replica changes. */
export type EncodableRows = readonly JsonRow[] | CdcRows;

/** Row `i` of an append, with its pseudo-columns if it has them (for messages, not the hot path). */
export function rowAt(rows: EncodableRows, i: number): JsonRow | undefined {
  if (!(rows instanceof CdcRows)) return rows[i];
  const change = rows.changes[i];
  return change && withCdc(change);
}

function cdcColumns(change: CdcRow): JsonRow {
  return {
    _CHANGE_TYPE: change.kind === 'upsert' ? 'UPSERT' : 'DELETE',
    _CHANGE_SEQUENCE_NUMBER: change.sequence,
  };
}

/** The client's rule for a field name a proto message can carry (letters, digits, `_`, not a digit first). */
const PROTO_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The client's placeholder for a column name a proto field cannot carry. */
function placeholderName(name: string): string {
  return `field_${Buffer.from(name)
    .toString('base64')
    .replace(/[^a-zA-Z0-9-_]/g, '')
    .replace(/-/g, '_')}`;
}

/** How values of one field are written: a scalar kind of the wire writer, or protobufjs for anything else. */
type FieldKind = 'string' | 'int64' | 'int32' | 'uint32' | 'double' | 'float' | 'bool' | 'bytes';

/** Per column name of a row: the proto field it goes to and how its values are written. */
interface FieldPlan {
  protoName: string;
  /** The field's key on the wire (field number and wire type). */
  tag: number;
  kind: FieldKind;
  repeated: boolean;
}

const KINDS: Record<string, { kind: FieldKind; wireType: number }> = {
  string: { kind: 'string', wireType: 2 },
  bytes: { kind: 'bytes', wireType: 2 },
  int64: { kind: 'int64', wireType: 0 },
  uint64: { kind: 'int64', wireType: 0 },
  int32: { kind: 'int32', wireType: 0 },
  uint32: { kind: 'uint32', wireType: 0 },
  bool: { kind: 'bool', wireType: 0 },
  double: { kind: 'double', wireType: 1 },
  float: { kind: 'float', wireType: 5 },
};

/** Decimal text every digit of which a double holds exactly. */
const SAFE_DECIMAL = /^-?\d{1,15}$/;

/** A row value for a column the descriptor (the table's schema as the writer saw it) does not have. */
export class UnknownFieldError extends Error {
  constructor(readonly column: string) {
    super(`the row has a value for column ${column}, which the table's write descriptor does not have`);
    this.name = 'UnknownFieldError';
  }
}

/**
 * Encodes rows with one descriptor; build a new one when the descriptor changes. Rows are written by
 * {@link WireWriter} field by field from a plan per column (no message object, no copy of the row); a
 * descriptor with a field the plan cannot write (a message, an enum, a packed list) encodes through
 * protobufjs instead, with the conversions above.
 */
export class RowEncoder {
  private readonly type: Type;
  private readonly plans = new Map<string, FieldPlan>();
  private readonly out = new WireWriter();
  /** Whether every field has a scalar kind the wire writer handles. */
  private readonly direct: boolean;

  constructor(descriptor: Descriptor) {
    const normalized = adapt.normalizeDescriptor(new protos.google.protobuf.DescriptorProto(descriptor));
    this.type = Type.fromDescriptor(normalized);
    this.direct = this.type.fieldsArray.every((f) => KINDS[f.type] !== undefined && !f.packed);
  }

  /** Whether the descriptor has a field for column `name`. */
  has(name: string): boolean {
    return this.type.fields[PROTO_NAME.test(name) ? name : placeholderName(name)] !== undefined;
  }

  /** One serialized message per row, in order. */
  encode(rows: EncodableRows): Uint8Array[] {
    if (rows instanceof CdcRows) {
      if (!this.direct) return rows.changes.map((c) => this.type.encode(this.convert(withCdc(c))).finish());
      const type = this.plan('_CHANGE_TYPE');
      const sequence = this.plan('_CHANGE_SEQUENCE_NUMBER');
      return rows.changes.map((c) => {
        this.fields(c.row);
        this.out.uint32(type.tag);
        this.out.string(c.kind === 'upsert' ? 'UPSERT' : 'DELETE');
        this.out.uint32(sequence.tag);
        this.out.string(c.sequence);
        return this.out.take();
      });
    }
    if (!this.direct) return rows.map((row) => this.type.encode(this.convert(row)).finish());
    return rows.map((row) => {
      this.fields(row);
      return this.out.take();
    });
  }

  private plan(name: string): FieldPlan {
    let plan = this.plans.get(name);
    if (!plan) {
      const protoName = PROTO_NAME.test(name) ? name : placeholderName(name);
      const field = this.type.fields[protoName];
      // Never drop a value: protobufjs would silently skip a name its type lacks.
      if (!field) throw new UnknownFieldError(name);
      const { kind, wireType } = KINDS[field.type] ?? { kind: 'string', wireType: 2 };
      plan = { protoName, tag: ((field.id << 3) | wireType) >>> 0, kind, repeated: field.repeated };
      this.plans.set(name, plan);
    }
    return plan;
  }

  /** Writes the row's fields (not yet taken: the caller may add more). */
  private fields(row: JsonRow): void {
    const out = this.out;
    for (const name in row) {
      const value = row[name];
      if (value === null || value === undefined) continue;
      const plan = this.plan(name);
      if (!Array.isArray(value)) {
        out.uint32(plan.tag);
        writeValue(out, plan.kind, value, name);
      } else {
        if (!plan.repeated) throw new TypeError(`column ${name}: a list for a field that is not repeated`);
        for (const element of value) {
          out.uint32(plan.tag);
          writeValue(out, plan.kind, element, name);
        }
      }
    }
  }

  /** The row as protobufjs takes it (the path for descriptors the wire writer does not cover). */
  private convert(row: JsonRow): Record<string, WriterValue> {
    const out: Record<string, WriterValue> = {};
    for (const name in row) {
      const value = row[name] as WriterValue;
      const { protoName, kind } = this.plan(name);
      const field = this.type.fields[protoName];
      if (kind === 'int64')
        out[protoName] = Array.isArray(value) ? value.map(asNumberIfSafe) : asNumberIfSafe(value);
      else if (field?.type !== 'string') out[protoName] = value;
      else if (typeof value === 'number') out[protoName] = value.toString(10);
      else if (Array.isArray(value))
        out[protoName] = value.map((v) => (typeof v === 'number' ? v.toString(10) : v));
      else out[protoName] = value;
    }
    return out;
  }
}

function withCdc(change: CdcRow): JsonRow {
  return { ...change.row, ...cdcColumns(change) };
}

function asNumberIfSafe(value: WriterValue): WriterValue {
  return typeof value === 'string' && SAFE_DECIMAL.test(value) ? Number(value) : value;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Decimal text as a 64-bit integer; text out of range is refused rather than wrapped modulo 2^64. */
function int64Of(text: string, column: string): bigint {
  const value = BigInt(text);
  if (value < INT64_MIN || value > INT64_MAX)
    throw new RangeError(`column ${column}: ${text} is out of the INT64 range`);
  return value;
}

/** One value of a field, by the field's kind, with the JSON writer's conversions. */
function writeValue(out: WireWriter, kind: FieldKind, value: WriterValue, column: string): void {
  if (value === null || Array.isArray(value))
    throw new TypeError(`column ${column}: a ${value === null ? 'NULL' : 'nested list'} inside a list`);
  switch (kind) {
    case 'string':
      out.string(typeof value === 'string' ? value : String(value));
      break;
    case 'int64':
      if (typeof value === 'number') out.int64FromNumber(value);
      else if (typeof value === 'boolean') out.uint32(value ? 1 : 0);
      else if (SAFE_DECIMAL.test(value)) out.int64FromNumber(Number(value));
      else out.int64FromBigInt(int64Of(value, column));
      break;
    case 'int32':
      out.int64FromNumber(Number(value) | 0);
      break;
    case 'uint32':
      out.uint32(Number(value));
      break;
    case 'double':
      out.double(Number(value));
      break;
    case 'float':
      out.float(Number(value));
      break;
    case 'bool':
      out.uint32(value ? 1 : 0);
      break;
    case 'bytes':
      if (typeof value !== 'string') throw new TypeError(`column ${column}: a ${typeof value} for BYTES`);
      out.base64(value);
      break;
  }
}
