/**
 * Exact keys in the replica (ADR-1402). BigQuery keeps TIMESTAMP at microseconds, so two Spanner keys that
 * differ below a microsecond would collapse into one replica row (and a delete of either would delete both).
 * Every TIMESTAMP key column `K` therefore gets a companion column `K__ns` holding the exact RFC 3339 text
 * with nine fractional digits; it is part of the replica's primary key, next to `K` itself.
 */
import type { JsonValue, SpannerType } from './change-record';
import { DecodeError, describeValue } from './client-values';
import { formatTimestamp, parseTimestamp } from './timestamp';
import type { WriterValue } from './value-mapping';

/** Suffix of the exact companion of a TIMESTAMP key column. */
export const EXACT_KEY_SUFFIX = '__ns';

/** The name of the exact companion of key column `name`. */
export function exactKeyColumn(name: string): string {
  return `${name}${EXACT_KEY_SUFFIX}`;
}

/** True when a key column of this type needs an exact companion. */
export function needsExactKey(type: SpannerType): boolean {
  return type.code === 'TIMESTAMP';
}

/** The exact text of a TIMESTAMP key value in mod form (RFC 3339, any precision) — nine fractional digits. */
export function exactKeyText(column: string, value: JsonValue): string {
  if (typeof value !== 'string')
    throw new DecodeError(column, `expected a TIMESTAMP key, saw ${describeValue(value)}`);
  try {
    return formatTimestamp(parseTimestamp(value));
  } catch (e) {
    throw new DecodeError(column, (e as Error).message);
  }
}

/**
 * Adds the exact companions of the TIMESTAMP columns of `key` (mod form) to a writer row, in place.
 * `types` gives each key column's type (other names are ignored).
 */
export function addExactKeys(
  row: Record<string, WriterValue>,
  key: Record<string, JsonValue>,
  types: ReadonlyMap<string, SpannerType> | ReadonlyArray<{ name: string; type: SpannerType }>,
): Record<string, WriterValue> {
  const typeOf = (name: string) =>
    'get' in types ? types.get(name) : types.find((c) => c.name === name)?.type;
  for (const name in key) {
    const type = typeOf(name);
    if (type && needsExactKey(type)) row[exactKeyColumn(name)] = exactKeyText(name, key[name] as JsonValue);
  }
  return row;
}
