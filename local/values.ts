/**
 * Generated cell values in Spanner's wire form (INT64 / NUMERIC / DATE / TIMESTAMP / BYTES / JSON as text),
 * which the Node client sends unchanged in mutations and the emulator stores by column type. Timestamps
 * carry microseconds so they survive BigQuery exactly.
 */
import { type DemoColumn, type DemoTable, elementKind, type ScalarKind } from './demo-schema';
import { encodePayload, LEVELS } from './proto-types';
import type { Random } from './random';

/** A value as written in a mutation. */
export type WireCell = string | number | boolean | null | Array<string | number | boolean | null>;

/** One row as written in a mutation. */
export type WireRow = Record<string, WireCell>;

const WORDS = ['amber', 'birch', 'cedar', 'delta', 'ember', 'fjord', 'gale', 'harbor', 'iris', 'juniper'];
const BASE_MS = Date.UTC(2024, 0, 1);

function timestamp(rng: Random): string {
  const ms = BASE_MS + rng.int(0, 365 * 86_400) * 1000 + rng.int(0, 999);
  const micros = String(rng.int(0, 999)).padStart(3, '0');
  return `${new Date(ms).toISOString().slice(0, 23)}${micros}Z`;
}

function scalar(kind: ScalarKind, rng: Random): WireCell {
  switch (kind) {
    case 'int':
      return String(rng.int(-1_000_000, 1_000_000));
    case 'string':
      return `${rng.pick(WORDS)} ${rng.pick(WORDS)} ✓`;
    case 'numeric':
      return `${rng.int(0, 99_999)}.${String(rng.int(0, 999_999_999)).padStart(9, '0')}`;
    case 'float':
      return rng.int(-1_000_000, 1_000_000) / 64;
    case 'bool':
      return rng.chance(0.5);
    case 'date':
      return new Date(BASE_MS + rng.int(-20_000, 20_000) * 86_400_000).toISOString().slice(0, 10);
    case 'timestamp':
      return timestamp(rng);
    case 'bytes':
      return Buffer.from(Array.from({ length: rng.int(1, 24) }, () => rng.int(0, 255))).toString('base64');
    case 'json':
      return JSON.stringify({ level: rng.int(1, 5), tier: rng.pick(WORDS), flags: [rng.chance(0.5)] });
    case 'float32':
      return Math.fround(rng.int(-1_000_000, 1_000_000) / 64);
    case 'proto':
      return encodePayload({ id: String(rng.int(-1_000_000, 1_000_000)), label: rng.pick(WORDS) });
    case 'enum':
      return String(rng.pick(LEVELS));
    case 'uuid':
      return `${rng.int(0, 0xffff).toString(16).padStart(4, '0')}0000-0000-4000-8000-${String(rng.int(0, 999_999)).padStart(12, '0')}`;
  }
}

/** A value for a column; nullable columns are NULL now and then. */
export function cellValue(column: DemoColumn, rng: Random): WireCell {
  if (column.nullable && rng.chance(0.15)) return null;
  if (column.kind === 'strings') return Array.from({ length: rng.int(0, 3) }, () => rng.pick(WORDS));
  const element = elementKind(column.kind);
  if (element) return Array.from({ length: rng.int(0, 3) }, () => scalar(element, rng) as string);
  return scalar(column.kind as ScalarKind, rng);
}

/** A full row with the given key values. */
export function rowValues(table: DemoTable, key: WireRow, rng: Random): WireRow {
  const row: WireRow = { ...key };
  for (const c of table.columns) if (!(c.name in key) && !c.generated) row[c.name] = cellValue(c, rng);
  return row;
}

/** Values for a few non-key columns (an update). */
export function someValues(table: DemoTable, rng: Random): WireRow {
  const candidates = table.columns.filter((c) => !table.key.includes(c.name) && !c.generated);
  const chosen = candidates.filter(() => rng.chance(0.4));
  const columns = chosen.length > 0 ? chosen : [rng.pick(candidates)];
  return Object.fromEntries(columns.map((c) => [c.name, cellValue(c, rng)]));
}
