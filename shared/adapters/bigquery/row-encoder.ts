/**
 * JSON-writer rows → serialized protobuf rows for the Storage Write API, with a protobufjs `Type` built once
 * per descriptor. The client's JSON writer deep-copies every row and, for each array value, looks its element
 * type up by a name that is not a message type (a thrown and caught error per array value); at tens of
 * thousands of rows per window that was the largest single cost of the sinks. The conversions applied here
 * are the JSON writer's for the values a {@link WriterValue} can hold: names a proto field cannot carry are
 * replaced by the client's placeholder name, NULL is left out, and a number bound for a string field (INT64,
 * NUMERIC, …) is written as its decimal text — inside arrays too.
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

/** Per column name of a row: the proto field name and whether numbers become decimal text. */
interface FieldPlan {
  protoName: string;
  numberAsText: boolean;
}

/** Encodes rows with one descriptor; build a new one when the descriptor changes. */
export class RowEncoder {
  private readonly type: Type;
  private readonly plans = new Map<string, FieldPlan>();

  constructor(descriptor: Descriptor) {
    const normalized = adapt.normalizeDescriptor(new protos.google.protobuf.DescriptorProto(descriptor));
    this.type = Type.fromDescriptor(normalized);
  }

  /** One serialized message per row, in order. */
  encode(rows: JsonRow[]): Uint8Array[] {
    return rows.map((row) => this.type.encode(this.type.create(this.convert(row))).finish());
  }

  private plan(name: string): FieldPlan {
    let plan = this.plans.get(name);
    if (!plan) {
      const protoName = PROTO_NAME.test(name) ? name : placeholderName(name);
      plan = { protoName, numberAsText: this.type.fields[protoName]?.type === 'string' };
      this.plans.set(name, plan);
    }
    return plan;
  }

  private convert(row: JsonRow): Record<string, WriterValue> {
    const out: Record<string, WriterValue> = {};
    for (const name in row) {
      const value = row[name] as WriterValue;
      const { protoName, numberAsText } = this.plan(name);
      if (!numberAsText) out[protoName] = value;
      else if (typeof value === 'number') out[protoName] = value.toString(10);
      else if (Array.isArray(value))
        out[protoName] = value.map((v) => (typeof v === 'number' ? v.toString(10) : v));
      else out[protoName] = value;
    }
    return out;
  }
}
