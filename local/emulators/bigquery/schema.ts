/**
 * Table schemas in the two shapes the emulator speaks: the REST `TableFieldSchema` (as `@google-cloud/bigquery`
 * sends it) and the Storage Write `TableSchema` (as GetWriteStream FULL returns it).
 */
import { z } from 'zod';

/** A REST schema field. Legacy type names (INTEGER, FLOAT, BOOLEAN, RECORD) are normalised on input. */
export interface Field {
  name: string;
  type: string;
  mode: 'NULLABLE' | 'REQUIRED' | 'REPEATED';
  fields?: Field[];
  description?: string;
  /** True when the client gave the mode (BigQuery echoes a field as given: no `mode` when none was set). */
  explicitMode?: boolean;
  /** `defaultValueExpression`, evaluated for missing values (see defaults.ts). */
  defaultValueExpression?: string;
  /** RANGE's element type: DATE, DATETIME or TIMESTAMP. */
  rangeElementType?: string;
  /** 12 for picosecond TIMESTAMP columns (stored as RFC 3339 text with 12 fractional digits). */
  timestampPrecision?: number;
  /** Other TableFieldSchema properties (maxLength, precision, policyTags, …), kept and returned as given. */
  extra?: Record<string, unknown>;
}

const ALIASES: Record<string, string> = {
  INTEGER: 'INT64',
  FLOAT: 'FLOAT64',
  BOOLEAN: 'BOOL',
  RECORD: 'STRUCT',
  DECIMAL: 'NUMERIC',
  BIGDECIMAL: 'BIGNUMERIC',
};

/** The GoogleSQL types the emulator stores. */
export const SUPPORTED_TYPES = new Set([
  'STRING',
  'INT64',
  'FLOAT64',
  'BOOL',
  'BYTES',
  'TIMESTAMP',
  'DATE',
  'TIME',
  'DATETIME',
  'NUMERIC',
  'BIGNUMERIC',
  'GEOGRAPHY',
  'JSON',
  'STRUCT',
  'RANGE',
]);

const RANGE_ELEMENTS = new Set(['DATE', 'DATETIME', 'TIMESTAMP']);
const KNOWN_KEYS = new Set([
  'name',
  'type',
  'mode',
  'fields',
  'description',
  'defaultValueExpression',
  'rangeElementType',
  'timestampPrecision',
]);

interface RawField {
  name: string;
  type?: string;
  mode?: string;
  fields?: RawField[];
  description?: string;
  defaultValueExpression?: string;
  rangeElementType?: { type?: string };
  timestampPrecision?: string | number;
  [key: string]: unknown;
}

const rawField: z.ZodType<RawField> = z.lazy(() =>
  z
    .object({
      name: z.string().min(1),
      type: z.string().optional(),
      mode: z.string().optional(),
      fields: z.array(rawField).optional(),
      description: z.string().optional(),
      defaultValueExpression: z.string().optional(),
      rangeElementType: z.object({ type: z.string().optional() }).loose().optional(),
      timestampPrecision: z.union([z.string(), z.number()]).optional(),
    })
    .loose(),
);

/** Zod schema of a REST `TableSchema` body. */
export const restSchema = z.object({ fields: z.array(rawField).default([]) });

/** Normalises REST fields: canonical type names, default mode, RECORD when sub-fields are present. */
export function normalizeFields(raw: RawField[]): Field[] {
  return raw.map((f) => {
    const given = (f.type ?? (f.fields ? 'STRUCT' : 'STRING')).toUpperCase();
    const type = ALIASES[given] ?? given;
    if (!SUPPORTED_TYPES.has(type)) throw new Error(`Unsupported type for field ${f.name}: ${given}`);
    const mode = (f.mode ?? 'NULLABLE').toUpperCase();
    if (mode !== 'NULLABLE' && mode !== 'REQUIRED' && mode !== 'REPEATED')
      throw new Error(`Invalid mode for field ${f.name}: ${mode}`);
    const out: Field = { name: f.name, type, mode };
    if (f.mode !== undefined) out.explicitMode = true;
    if (type === 'STRUCT') out.fields = normalizeFields(f.fields ?? []);
    if (f.description !== undefined) out.description = f.description;
    if (f.defaultValueExpression !== undefined) out.defaultValueExpression = f.defaultValueExpression;
    if (type === 'RANGE') {
      const el = f.rangeElementType?.type?.toUpperCase();
      if (!el || !RANGE_ELEMENTS.has(el))
        throw new Error(`Field ${f.name} of type RANGE needs rangeElementType DATE, DATETIME or TIMESTAMP`);
      out.rangeElementType = el;
    }
    if (f.timestampPrecision !== undefined) {
      const p = Number(f.timestampPrecision);
      if (type !== 'TIMESTAMP' || (p !== 6 && p !== 12))
        throw new Error(`Field ${f.name}: timestampPrecision must be 6 or 12 on a TIMESTAMP column`);
      out.timestampPrecision = p;
    }
    const extra = Object.fromEntries(Object.entries(f).filter(([k]) => !KNOWN_KEYS.has(k)));
    if (Object.keys(extra).length > 0) out.extra = extra;
    return out;
  });
}

const LEGACY: Record<string, string> = {
  INT64: 'INTEGER',
  FLOAT64: 'FLOAT',
  BOOL: 'BOOLEAN',
  STRUCT: 'RECORD',
};

/** The REST rendering of a schema, with the legacy type names tables.get returns. */
export function toRestFields(fields: Field[]): Record<string, unknown>[] {
  return fields.map((f) => ({
    name: f.name,
    type: LEGACY[f.type] ?? f.type,
    ...(f.explicitMode ? { mode: f.mode } : {}),
    ...(f.fields ? { fields: toRestFields(f.fields) } : {}),
    ...(f.description !== undefined ? { description: f.description } : {}),
    ...(f.defaultValueExpression !== undefined ? { defaultValueExpression: f.defaultValueExpression } : {}),
    ...(f.rangeElementType ? { rangeElementType: { type: f.rangeElementType } } : {}),
    ...(f.timestampPrecision !== undefined ? { timestampPrecision: String(f.timestampPrecision) } : {}),
    ...(f.extra ?? {}),
  }));
}

const STORAGE_TYPES: Record<string, string> = { FLOAT64: 'DOUBLE', STRUCT: 'STRUCT' };

/** The Storage Write API rendering (`google.cloud.bigquery.storage.v1.TableSchema`), enum names as strings. */
export function toStorageFields(fields: Field[]): Record<string, unknown>[] {
  return fields.map((f) => ({
    name: f.name,
    type: STORAGE_TYPES[f.type] ?? f.type,
    mode: f.mode,
    fields: f.fields ? toStorageFields(f.fields) : [],
    description: f.description ?? '',
    defaultValueExpression: f.defaultValueExpression ?? '',
    ...(f.rangeElementType ? { rangeElementType: { type: f.rangeElementType } } : {}),
    ...(f.timestampPrecision !== undefined
      ? { timestampPrecision: { value: String(f.timestampPrecision) } }
      : {}),
  }));
}

/** Finds a field by name, case-insensitively as BigQuery column names are. */
export function findField(fields: Field[], name: string): Field | undefined {
  const lower = name.toLowerCase();
  return fields.find((f) => f.name.toLowerCase() === lower);
}
