/**
 * Rows of a streaming query in Spanner's wire form, assembled from the raw PartialResultSets (ADR-1404):
 * INT64 / NUMERIC / TIMESTAMP / DATE / UUID / INTERVAL as text, FLOAT as a number or `"NaN"` / `"Infinity"`,
 * BOOL as a boolean, BYTES and PROTO as base64, JSON as its exact text, ARRAY as a list. That is the form the
 * change stream's mods carry, so one mapping serves both; no client value object is built per cell.
 * A value split across PartialResultSets (`chunked_value`) is merged as the API documents: strings are
 * concatenated; lists are concatenated with the last element of the first merged into the first of the
 * second when both are strings or both lists; other values are never split.
 */
import type { JsonValue } from '../../domain/change-record';
import { DecodeError } from '../../domain/client-values';

/** A value in wire form (a JSON value without objects). */
export type WireValue = null | boolean | number | string | WireValue[];

/** `google.protobuf.Value` as the client's gRPC layer hands it over (protobufjs, oneofs named in `kind`). */
export interface ProtoValue {
  kind?: string;
  nullValue?: unknown;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  listValue?: { values?: ProtoValue[] | null } | null;
}

/** The fields of a `PartialResultSet` read here. */
export interface PartialResultSet {
  metadata?: { rowType?: { fields?: Array<{ name?: string | null; type?: unknown }> | null } | null } | null;
  values?: ProtoValue[] | null;
  chunkedValue?: boolean | null;
}

/** One column of the result, as its metadata names it. */
export interface ResultField {
  name: string;
  type: unknown;
}

/** `google.protobuf.Value` → wire form. */
export function wireValue(v: ProtoValue | null | undefined): WireValue {
  if (!v) return null;
  switch (v.kind) {
    case 'stringValue':
      return v.stringValue ?? '';
    case 'numberValue':
      return v.numberValue ?? 0;
    case 'boolValue':
      return v.boolValue ?? false;
    case 'listValue':
      return (v.listValue?.values ?? []).map(wireValue);
    case 'nullValue':
      return null;
    default:
      if (typeof v.stringValue === 'string') return v.stringValue;
      if (v.listValue) return (v.listValue.values ?? []).map(wireValue);
      if (typeof v.numberValue === 'number') return v.numberValue;
      if (typeof v.boolValue === 'boolean') return v.boolValue;
      return null;
  }
}

/** Merges the tail of a chunked value into its head. */
export function mergeChunks(head: WireValue, tail: WireValue): WireValue {
  if (typeof head === 'string' && typeof tail === 'string') return head + tail;
  if (Array.isArray(head) && Array.isArray(tail)) {
    if (head.length === 0 || tail.length === 0) return [...head, ...tail];
    const last = head[head.length - 1] as WireValue;
    const first = tail[0] as WireValue;
    const joinable =
      (typeof last === 'string' && typeof first === 'string') ||
      (Array.isArray(last) && Array.isArray(first));
    return joinable ? [...head.slice(0, -1), mergeChunks(last, first), ...tail.slice(1)] : [...head, ...tail];
  }
  throw new DecodeError('result', 'a chunked value continues with a value of another kind');
}

/**
 * Assembles rows from a stream of raw PartialResultSets; `onFields` receives the result's columns before the
 * first row. A stream that ends inside a row or a chunked value is an error.
 */
export async function* wireRows(
  sets: AsyncIterable<unknown>,
  onFields: (fields: ResultField[]) => void,
): AsyncIterable<WireValue[]> {
  let width = 0;
  let row: WireValue[] = [];
  let pending: { value: WireValue } | undefined;
  for await (const set of sets as AsyncIterable<PartialResultSet>) {
    const fields = set.metadata?.rowType?.fields;
    if (fields && width === 0) {
      width = fields.length;
      onFields(fields.map((f) => ({ name: String(f.name ?? ''), type: f.type })));
    }
    const values = (set.values ?? []).map(wireValue);
    if (pending && values.length > 0) values[0] = mergeChunks(pending.value, values[0] as WireValue);
    else if (pending) values.push(pending.value);
    pending = undefined;
    if (set.chunkedValue && values.length > 0) pending = { value: values.pop() as WireValue };
    for (const v of values) {
      row.push(v);
      if (row.length < width) continue;
      yield row;
      row = [];
    }
  }
  if (pending || row.length > 0) throw new DecodeError('result', 'the stream ended inside a row');
}

/** A wire row as named values (mod form), for the columns `names` in result order. */
export function namedRow(values: WireValue[], names: string[]): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  for (let i = 0; i < names.length; i++) out[names[i] as string] = values[i] ?? null;
  return out;
}

/** A converter of one wire value of a result type to plain JSON: a STRUCT (a list) → an object of its fields. */
export type Structurer = (value: WireValue) => unknown;

/**
 * Builds the converter for `type` once (a result's metadata type): a STRUCT's list becomes an object keyed by
 * its field names, an ARRAY converts element by element, every other value stays in wire form. The form the
 * change-record decoders read (`json: true` rows of the client, without its value objects).
 */
export function structurerOf(type: unknown): Structurer {
  const t = type as {
    code?: unknown;
    arrayElementType?: unknown;
    structType?: { fields?: Array<{ name?: string | null; type?: unknown }> | null } | null;
  } | null;
  if (t?.code === 'ARRAY') {
    const element = structurerOf(t.arrayElementType);
    return (v) => (Array.isArray(v) ? v.map(element) : v);
  }
  if (t?.code === 'STRUCT') {
    const fields = (t.structType?.fields ?? []).map((f) => ({
      name: String(f.name ?? ''),
      of: structurerOf(f.type),
    }));
    return (v) => {
      if (!Array.isArray(v)) return v;
      const out: Record<string, unknown> = {};
      for (let i = 0; i < fields.length; i++) {
        const f = fields[i] as (typeof fields)[number];
        out[f.name] = f.of(v[i] ?? null);
      }
      return out;
    };
  }
  return (v) => v;
}
