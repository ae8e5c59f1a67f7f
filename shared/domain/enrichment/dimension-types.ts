/**
 * A dimension column retyped since its lookup was resolved, noticed at the next read: every read reports the
 * types it saw, and they are compared here with the types the lookup was validated with. A change BigQuery
 * holds in the same column type (`STRING(10)` → `STRING(MAX)`, ENUM ↔ INT64, PROTO ↔ BYTES) is compatible:
 * the enricher takes the new type and drops its cached rows. Anything else (STRING ↔ BYTES, a change
 * BigQuery would have to widen) would put values of the new type in a column of the old one, so it is a
 * permanent error naming the lookup, the dimension table, the column and both types.
 */
import type { SpannerType } from '../change-record';
import { SluiceError } from '../errors';
import { formatSpannerType } from '../spanner-types';
import { decideSpannerTypeChange } from '../type-changes';
import type { ResolvedLookup } from './lookups';

/** A brought column whose type differs from the validated one. */
export interface DimensionTypeChange {
  column: string;
  from: SpannerType;
  to: SpannerType;
}

/** The outcome of a comparison: nothing changed, only compatible changes, or the first incompatible one. */
export type DimensionTypeCheck =
  | { kind: 'same' }
  | { kind: 'compatible'; changes: DimensionTypeChange[] }
  | { kind: 'incompatible'; error: SluiceError };

/**
 * Compares the types a read reported (`seen`; a column it did not report is not judged) with `validated`
 * (brought column → the type its enriched column was made for).
 */
export function checkDimensionTypes(
  lookup: Pick<ResolvedLookup, 'id' | 'dimension' | 'columns'>,
  validated: ReadonlyMap<string, SpannerType>,
  seen: Readonly<Record<string, SpannerType>>,
): DimensionTypeCheck {
  const changes: DimensionTypeChange[] = [];
  for (const c of lookup.columns) {
    const from = validated.get(c.source);
    const to = seen[c.source];
    if (!from || !to || formatSpannerType(from) === formatSpannerType(to)) continue;
    const decision = decideSpannerTypeChange(c.target, from, to, false);
    if (decision.kind !== 'same' && decision.kind !== 'narrow')
      return {
        kind: 'incompatible',
        error: new SluiceError(
          'permanent',
          `lookup ${lookup.id}: dimension table ${lookup.dimension} column ${c.source} changed type from ${formatSpannerType(from)} to ${formatSpannerType(to)}, ` +
            `but its enriched column ${c.target} was made for ${formatSpannerType(from)} and cannot hold the new values. ` +
            `Fix: bring the column under another prefix, or drop it from the lookup in SLUICE_TABLES, and redeploy; the failed window is retried then`,
        ),
      };
    changes.push({ column: c.source, from, to });
  }
  return changes.length > 0 ? { kind: 'compatible', changes } : { kind: 'same' };
}
