/**
 * JSON encoding of column types and values inside data change records, as the service writes them:
 * INT64 and NUMERIC as strings, FLOAT32/FLOAT64 as numbers, BOOL as booleans, STRING / DATE / BYTES (base64)
 * as strings, TIMESTAMP as an RFC 3339 string (fractional seconds kept, unlike the official emulator), JSON as
 * its text in a string, ARRAY as arrays, NULL as null.
 */
import type { SpannerTypeJson, WireValue } from '../hooks';
import type { JsonValue } from './model';

const UNSPECIFIED_ANNOTATION = 'TYPE_ANNOTATION_CODE_UNSPECIFIED';

/** A column type as `column_types[].type`: `{"code": "ARRAY", "array_element_type": {"code": "INT64"}}`. */
export function typeToJson(type: SpannerTypeJson): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = { code: type.code };
  if (type.arrayElementType) out['array_element_type'] = typeToJson(type.arrayElementType);
  if (type.structType) {
    out['struct_type'] = {
      fields: type.structType.fields.map((f) => ({ name: f.name, type: typeToJson(f.type) })),
    };
  }
  if (type.typeAnnotation && type.typeAnnotation !== UNSPECIFIED_ANNOTATION) {
    out['type_annotation'] = type.typeAnnotation;
  }
  if (type.protoTypeFqn) out['proto_type_fqn'] = type.protoTypeFqn;
  return out;
}

function encodeFloat(value: WireValue): JsonValue {
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'string') {
    const n = Number(value);
    // NaN and ±Infinity have no JSON number form; keep the wire strings ("NaN", "Infinity", "-Infinity").
    return Number.isFinite(n) && value.trim() !== '' ? n : value;
  }
  return value as JsonValue;
}

/** Encodes one value of a column of type `type`, given in wire form. */
export function encodeValue(value: WireValue | undefined, type: SpannerTypeJson): JsonValue {
  if (value === null || value === undefined) return null;
  switch (type.code) {
    case 'ARRAY': {
      const element = type.arrayElementType ?? { code: 'STRING' };
      return Array.isArray(value) ? value.map((v) => encodeValue(v, element)) : null;
    }
    case 'FLOAT64':
    case 'FLOAT32':
      return encodeFloat(value);
    case 'INT64':
    case 'NUMERIC':
    case 'ENUM':
      return typeof value === 'number' ? String(value) : (value as JsonValue);
    case 'BOOL':
      return typeof value === 'string' ? value === 'true' : (value as JsonValue);
    case 'JSON':
      return typeof value === 'string' ? value : JSON.stringify(value);
    default:
      return value as JsonValue;
  }
}
