/**
 * JSON-writer rows → serialized protobuf rows for the Storage Write API, with a protobufjs `Type` built once
 * per descriptor. The client's JSON writer deep-copies every row and, for each array value, looks its element
 * type up by a name that is not a message type (a thrown and caught error per array value); at tens of
 * thousands of rows per window that was the largest single cost of the sinks. The conversions applied here
 * are the JSON writer's for the values a {@link WriterValue} can hold: names a proto field cannot carry are
 * replaced by the client's placeholder name, NULL is left out, and a number bound for a string field (INT64,
 * NUMERIC, …) is written as its decimal text — inside arrays too. A decimal string of at most 15 digits
 * bound for a 64-bit integer field (INT64, TIMESTAMP micros) is handed to protobufjs as a number: the same
 * varint, without parsing the text into a Long. A value for a column the descriptor lacks is an
 * {@link UnknownFieldError}, never dropped.
 */
import { adapt, protos } from '@google-cloud/bigquery-storage';
import { Type } from 'protobufjs';
import type { WriterValue } from '../../domain/value-mapping';

type Descriptor = protos.google.protobuf.IDescriptorProto;

/** A row for the JSON writer. */
export type JsonRow = Record<string, WriterValue>;

/** The client's rule for a field name a proto message can carry (letters, digits, `_`, not a digit first). */
const PROTO_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The client's placeholder for a column name a proto field cannot carry. */
function placeholderName(name: string): string {
  return `field_${Buffer.from(name)
    .toString('base64')
    .replace(/[^a-zA-Z0-9-_]/g, '')
    .replace(/-/g, '_')}`;
}

/** Per column name of a row: the proto field name and how its values are handed to protobufjs. */
interface FieldPlan {
  protoName: string;
  /** Numbers become decimal text (string fields). */
  numberAsText: boolean;
  /** Short decimal strings become numbers (64-bit integer fields). */
  textAsNumber: boolean;
}

const INTEGER_64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
/** Decimal text every digit of which a double holds exactly. */
const SAFE_DECIMAL = /^-?\d{1,15}$/;

function asNumberIfSafe(value: WriterValue): WriterValue {
  return typeof value === 'string' && SAFE_DECIMAL.test(value) ? Number(value) : value;
}

/** A row value for a column the descriptor (the table's schema as the writer saw it) does not have. */
export class UnknownFieldError extends Error {
  constructor(readonly column: string) {
    super(`the row has a value for column ${column}, which the table's write descriptor does not have`);
    this.name = 'UnknownFieldError';
  }
}

/** Encodes rows with one descriptor; build a new one when the descriptor changes. */
export class RowEncoder {
  private readonly type: Type;
  private readonly plans = new Map<string, FieldPlan>();

  constructor(descriptor: Descriptor) {
    const normalized = adapt.normalizeDescriptor(new protos.google.protobuf.DescriptorProto(descriptor));
    this.type = Type.fromDescriptor(normalized);
  }

  /** Whether the descriptor has a field for column `name`. */
  has(name: string): boolean {
    return this.type.fields[PROTO_NAME.test(name) ? name : placeholderName(name)] !== undefined;
  }

  /** One serialized message per row, in order. */
  encode(rows: JsonRow[]): Uint8Array[] {
    // protobufjs encodes plain objects as they are: no message instance per row.
    return rows.map((row) => this.type.encode(this.convert(row)).finish());
  }

  private plan(name: string): FieldPlan {
    let plan = this.plans.get(name);
    if (!plan) {
      const protoName = PROTO_NAME.test(name) ? name : placeholderName(name);
      // Never drop a value: protobufjs would silently skip a name its type lacks.
      if (!this.type.fields[protoName]) throw new UnknownFieldError(name);
      const type = this.type.fields[protoName]?.type;
      plan = { protoName, numberAsText: type === 'string', textAsNumber: INTEGER_64.has(type ?? '') };
      this.plans.set(name, plan);
    }
    return plan;
  }

  private convert(row: JsonRow): Record<string, WriterValue> {
    const out: Record<string, WriterValue> = {};
    for (const name in row) {
      const value = row[name] as WriterValue;
      const { protoName, numberAsText, textAsNumber } = this.plan(name);
      if (textAsNumber)
        out[protoName] = Array.isArray(value) ? value.map(asNumberIfSafe) : asNumberIfSafe(value);
      else if (!numberAsText) out[protoName] = value;
      else if (typeof value === 'number') out[protoName] = value.toString(10);
      else if (Array.isArray(value))
        out[protoName] = value.map((v) => (typeof v === 'number' ? v.toString(10) : v));
      else out[protoName] = value;
    }
    return out;
  }
}
