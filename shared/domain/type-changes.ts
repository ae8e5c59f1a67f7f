/**
 * The policy for a column whose type changed in Spanner while replication runs, decided on the BigQuery
 * types the two Spanner types map to: the same BigQuery type (`STRING(10)` → `STRING(MAX)`, ENUM ↔ INT64,
 * PROTO ↔ BYTES) needs nothing; a widening BigQuery can apply in place (INT64 → NUMERIC / BIGNUMERIC /
 * FLOAT64, NUMERIC → BIGNUMERIC / FLOAT64, BIGNUMERIC → FLOAT64) is applied; a value of a type the column
 * was already widened from (a record committed before the change, read by a lagging partition or replayed
 * from a dead letter) is written into the wider column as it is (ADR-2121); anything else (e.g.
 * STRING ↔ BYTES) is a permanent error naming the table, the column, both types and the fix.
 */
import { type BigQueryField, type BigQueryType, bigQueryFieldOf } from './bigquery-schema';
import type { SpannerType } from './change-record';
import { SluiceError } from './errors';
import { formatSpannerType } from './spanner-types';

/** BigQuery's in-place type coercions (`ALTER COLUMN … SET DATA TYPE`). */
const WIDENINGS: Partial<Record<BigQueryType, BigQueryType[]>> = {
  INT64: ['NUMERIC', 'BIGNUMERIC', 'FLOAT64'],
  NUMERIC: ['BIGNUMERIC', 'FLOAT64'],
  BIGNUMERIC: ['FLOAT64'],
};

/**
 * The wider column types that hold every value of a narrower type exactly: only these take narrower values.
 * A FLOAT64 column does not (an INT64 past 2^53 or a NUMERIC of 17 digits would be rounded, silently).
 */
const EXACT_HOLDERS: Partial<Record<BigQueryType, BigQueryType[]>> = {
  INT64: ['NUMERIC', 'BIGNUMERIC'],
  NUMERIC: ['BIGNUMERIC'],
};

/** What to do about one column whose BigQuery field differs from what the source now maps to. */
export type FieldChange =
  | { kind: 'same' }
  | { kind: 'widen'; column: string; from: BigQueryType; to: BigQueryType }
  /** The column is already of a wider type than the values: they are written into it, the column stays. */
  | { kind: 'narrow'; column: string; from: BigQueryType; to: BigQueryType }
  | { kind: 'incompatible'; column: string; have: string; want: string };

/** Compares a BigQuery field as it is with the field the source maps to now. */
export function compareFields(
  have: { name: string; type: BigQueryType; repeated: boolean },
  want: BigQueryField,
): FieldChange {
  const repeated = want.mode === 'REPEATED';
  const text = (t: string, r: boolean) => `${t}${r ? ' REPEATED' : ''}`;
  if (have.repeated !== repeated)
    return {
      kind: 'incompatible',
      column: want.name,
      have: text(have.type, have.repeated),
      want: text(want.type, repeated),
    };
  if (have.type === want.type) return { kind: 'same' };
  if (WIDENINGS[have.type]?.includes(want.type))
    return { kind: 'widen', column: want.name, from: have.type, to: want.type };
  // The reverse of a widening: every value of the narrower type is exactly a value of the column's type.
  if (EXACT_HOLDERS[want.type]?.includes(have.type))
    return { kind: 'narrow', column: want.name, from: have.type, to: want.type };
  return {
    kind: 'incompatible',
    column: want.name,
    have: text(have.type, have.repeated),
    want: text(want.type, repeated),
  };
}

/** The permanent error of an incompatible change: table, column, both types, and how to fix it. */
export function incompatibleTypeError(args: {
  source: string;
  destination: string;
  column: string;
  bigQueryType: string;
  spannerType?: SpannerType;
  mapsTo: string;
  previousSpannerType?: SpannerType;
}): SluiceError {
  const now = args.spannerType
    ? `${formatSpannerType(args.spannerType)} in Spanner, which maps to BigQuery ${args.mapsTo}`
    : `BigQuery ${args.mapsTo}`;
  const before = args.previousSpannerType ? ` (it was ${formatSpannerType(args.previousSpannerType)})` : '';
  return new SluiceError(
    'permanent',
    `column ${args.source}.${args.column} changed type: it is now ${now}${before}, but the replica table ${args.destination} holds it as ${args.bigQueryType}, and BigQuery cannot convert that in place. Fix: drop (or rename) the replica table ${args.destination} in BigQuery, then backfill ${args.source} (POST /backfills {"tables": ["${args.source}"]}) to recreate it with the new type; the history table is not affected`,
  );
}

/**
 * The decision for a Spanner type change of one column, from the BigQuery fields both types map to.
 * @throws nothing; an incompatible change comes back as `incompatible` for the caller to raise.
 */
export function decideSpannerTypeChange(
  column: string,
  from: SpannerType,
  to: SpannerType,
  key: boolean,
): FieldChange {
  const field = (type: SpannerType) => bigQueryFieldOf({ name: column, type, nullable: !key });
  const before = field(from);
  return compareFields({ name: column, type: before.type, repeated: before.mode === 'REPEATED' }, field(to));
}

/** A field of an existing table, as the REST API reports it (legacy type names allowed). */
export interface ExistingField {
  name?: string | null;
  type?: string | null;
  mode?: string | null;
}

/** REST reports legacy type names; the comparison uses standard SQL names. */
const STANDARD: Record<string, string> = {
  INTEGER: 'INT64',
  FLOAT: 'FLOAT64',
  BOOLEAN: 'BOOL',
  RECORD: 'STRUCT',
};

function standardType(type: string | null | undefined): string {
  const upper = (type ?? '').toUpperCase();
  return STANDARD[upper] ?? upper;
}

/** What an existing table needs to hold the fields the source maps to now. */
export interface FieldPlan {
  /** Fields to add, NULLABLE (or REPEATED): BigQuery adds no REQUIRED column to an existing table. */
  add: BigQueryField[];
  /** Columns to widen in place (`ALTER COLUMN … SET DATA TYPE`). */
  widen: Array<{ name: string; to: BigQueryType }>;
}

/**
 * Compares the table's fields with the wanted ones. Columns only ever come and widen: a field the source no
 * longer has stays, and a column wider than wanted stays wide (its narrower values are written into it). @throws SluiceError (`permanent`) naming the column, both types and the fix when a type
 * changed in a way BigQuery cannot apply.
 */
export function planFields(
  existing: ReadonlyArray<ExistingField>,
  wanted: readonly BigQueryField[],
  table: string,
  source = table,
  spannerTypes: ReadonlyMap<string, SpannerType> = new Map(),
): FieldPlan {
  const byName = new Map(existing.map((f) => [(f.name ?? '').toLowerCase(), f]));
  const plan: FieldPlan = { add: [], widen: [] };
  for (const field of wanted) {
    const have = byName.get(field.name.toLowerCase());
    if (!have) {
      plan.add.push({ ...field, mode: field.mode === 'REPEATED' ? 'REPEATED' : 'NULLABLE' });
      continue;
    }
    const repeated = (have.mode ?? 'NULLABLE').toUpperCase() === 'REPEATED';
    const change = compareFields(
      { name: field.name, type: standardType(have.type) as BigQueryType, repeated },
      field,
    );
    if (change.kind === 'widen') plan.widen.push({ name: have.name ?? field.name, to: change.to });
    else if (change.kind === 'incompatible')
      throw incompatibleTypeError({
        source,
        destination: table,
        column: field.name,
        bigQueryType: change.have,
        mapsTo: change.want,
        ...(spannerTypes.has(field.name) ? { spannerType: spannerTypes.get(field.name) } : {}),
      });
  }
  return plan;
}
