/**
 * JSON ⇄ `google.protobuf.Struct` in the object form the gRPC clients take (`{fields: {k: {stringValue}}}`):
 * the Data Lineage API receives an OpenLineage event as a Struct, and the generated client does not convert
 * plain JSON itself.
 */

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** `google.protobuf.Value` as a plain object. */
export interface StructValue {
  nullValue?: 'NULL_VALUE' | 0;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: Struct;
  listValue?: { values?: StructValue[] };
}

/** `google.protobuf.Struct` as a plain object. */
export interface Struct {
  fields?: Record<string, StructValue>;
}

/** A JSON value as a protobuf Value. @throws Error for a non-finite number (Struct cannot carry it). */
export function toValue(value: Json): StructValue {
  if (value === null) return { nullValue: 'NULL_VALUE' };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`cannot encode ${value} in a protobuf Struct`);
    return { numberValue: value };
  }
  if (typeof value === 'string') return { stringValue: value };
  if (Array.isArray(value)) return { listValue: { values: value.map(toValue) } };
  return { structValue: toStruct(value) };
}

/** A JSON object as a protobuf Struct. */
export function toStruct(object: { [key: string]: Json }): Struct {
  const fields: Record<string, StructValue> = {};
  for (const [k, v] of Object.entries(object)) fields[k] = toValue(v);
  return { fields };
}

/** A protobuf Value (as decoded with `oneofs: true` or without) back to JSON. */
export function fromValue(value: StructValue | undefined): Json {
  if (!value) return null;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.numberValue !== undefined) return value.numberValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.structValue !== undefined) return fromStruct(value.structValue);
  if (value.listValue !== undefined) return (value.listValue.values ?? []).map(fromValue);
  return null;
}

/** A protobuf Struct back to a JSON object. */
export function fromStruct(struct: Struct | undefined): { [key: string]: Json } {
  const out: { [key: string]: Json } = {};
  for (const [k, v] of Object.entries(struct?.fields ?? {})) out[k] = fromValue(v);
  return out;
}
