/** The lookups' counters as the status sums them, and their arithmetic (pure). */

/** One lookup's counters summed over every instance. */
export interface LookupTotals {
  dimension: string;
  mode: string;
  rows: number;
  reads: number;
  retries: number;
  missing: number;
  unresolved: number;
  cacheHits: number;
  cacheMisses: number;
}

const COUNTS = ['rows', 'reads', 'retries', 'missing', 'unresolved', 'cacheHits', 'cacheMisses'] as const;

function zero(dimension: string, mode: string): LookupTotals {
  return {
    dimension,
    mode,
    rows: 0,
    reads: 0,
    retries: 0,
    missing: 0,
    unresolved: 0,
    cacheHits: 0,
    cacheMisses: 0,
  };
}

/** Adds `sign` × `from` into `into`, lookup by lookup. */
export function plus(
  into: Record<string, LookupTotals>,
  from: Record<string, LookupTotals>,
  sign: 1 | -1,
): void {
  for (const [id, t] of Object.entries(from)) {
    const target = into[id] ?? zero(t.dimension, t.mode);
    into[id] = target;
    for (const k of COUNTS) target[k] += sign * t[k];
  }
}

/**
 * One instance's published counters (untrusted JSON, in the reader's `EnrichmentStats` shape) as totals;
 * undefined when the text is not an object, and a malformed entry's counts are 0.
 */
export function parseCounters(text: string | undefined): Record<string, LookupTotals> | undefined {
  let parsed: unknown;
  try {
    parsed = text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const out: Record<string, LookupTotals> = {};
  for (const [id, raw] of Object.entries(parsed as Record<string, Record<string, unknown>>)) {
    const n = (k: string) => (typeof raw?.[k] === 'number' ? (raw[k] as number) : 0);
    const cache = (raw?.cache ?? {}) as Record<string, unknown>;
    const c = (k: string) => (typeof cache[k] === 'number' ? (cache[k] as number) : 0);
    out[id] = {
      dimension: String(raw?.dimension ?? ''),
      mode: String(raw?.mode ?? ''),
      rows: n('rows'),
      reads: n('reads'),
      retries: n('retries'),
      missing: n('missing'),
      unresolved: n('unresolved'),
      cacheHits: c('hits'),
      cacheMisses: c('misses'),
    };
  }
  return out;
}
