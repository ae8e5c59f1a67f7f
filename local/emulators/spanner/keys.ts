/**
 * Key sets and key order: Spanner orders rows by primary key (per column ASC/DESC, NULLs first), and
 * key ranges may name a prefix of the key. Comparisons work on canonical wire values.
 */
import { Code, SpannerError, type SpannerTypeJson, type WireValue } from './hooks';
import type { KeyPart, Table } from './schema';
import { type ProtoValue, protoToWire, wireToStored } from './values';

/** `google.spanner.v1.KeySet` in plain-object form. */
export interface KeySetJson {
  keys?: Array<{ values?: ProtoValue[] }>;
  ranges?: Array<Record<string, { values?: ProtoValue[] } | undefined>>;
  all?: boolean;
}

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?$/;

/** Compares decimal texts exactly (a double would call NUMERIC keys 29 digits long equal); NaN first. */
function compareDecimal(a: string, b: string): number {
  const [x, y] = [DECIMAL.exec(a), DECIMAL.exec(b)];
  if (!x || !y) return x ? 1 : y ? -1 : 0;
  const scale = Math.max((x[3] ?? '').length, (y[3] ?? '').length);
  const exact = (m: RegExpExecArray) =>
    (m[1] === '-' ? -1n : 1n) * BigInt(`${m[2] || '0'}${(m[3] ?? '').padEnd(scale, '0')}`);
  const [u, v] = [exact(x), exact(y)];
  return u < v ? -1 : u > v ? 1 : 0;
}

function compareScalar(a: WireValue, b: WireValue, type: SpannerTypeJson): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
  switch (type.code) {
    case 'INT64': {
      const [x, y] = [BigInt(a as string), BigInt(b as string)];
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 'FLOAT64':
    case 'FLOAT32': {
      // NaN sorts before every other value and equals only itself (a plain comparison calls it equal to all).
      const [x, y] = [Number(a), Number(b)];
      if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) ? (Number.isNaN(y) ? 0 : -1) : 1;
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 'NUMERIC':
      return compareDecimal(String(a), String(b));
    case 'BOOL':
      return a === b ? 0 : a ? 1 : -1;
    case 'BYTES':
      return Buffer.compare(Buffer.from(String(a), 'base64'), Buffer.from(String(b), 'base64'));
    default: {
      const [x, y] = [Buffer.from(String(a)), Buffer.from(String(b))];
      return Buffer.compare(x, y);
    }
  }
}

/** Canonicalizes a client-sent key against the table's key column types (normalizing timestamps etc.). */
export function canonicalKey(table: Table, parts: KeyPart[], key: WireValue[]): WireValue[] {
  if (key.length > parts.length)
    throw new SpannerError(Code.INVALID_ARGUMENT, `Wrong number of key parts for table ${table.name}`);
  return key.map((v, i) => {
    const col = table.columns.find((c) => c.name === (parts[i] as KeyPart).name);
    if (!col) return v;
    const stored = wireToStored(v, col.ct.type);
    if (stored === null) return null;
    if (typeof stored === 'bigint') return col.ct.type.code === 'BOOL' ? stored === 1n : stored.toString();
    return Buffer.isBuffer(stored)
      ? stored.toString('base64')
      : typeof stored === 'string' && col.ct.type.code === 'ARRAY'
        ? v
        : stored;
  });
}

/** Compares two keys (or a key and a prefix, over the prefix's length). */
export function compareKeys(table: Table, parts: KeyPart[], a: WireValue[], b: WireValue[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const part = parts[i] as KeyPart;
    const col = table.columns.find((c) => c.name === part.name);
    const c = compareScalar(a[i] ?? null, b[i] ?? null, col?.ct.type ?? { code: 'STRING' });
    if (c !== 0) return part.desc ? -c : c;
  }
  return 0;
}

/** Returns a predicate telling whether a key (wire values of `parts`) is in the key set. */
export function keySetMatcher(table: Table, parts: KeyPart[], ks: KeySetJson): (key: WireValue[]) => boolean {
  if (ks.all) return () => true;
  const decode = (l?: { values?: ProtoValue[] }) =>
    canonicalKey(table, parts, (l?.values ?? []).map(protoToWire));
  const keys = (ks.keys ?? []).map(decode);
  const ranges = (ks.ranges ?? []).map((r) => ({
    start: r.startClosed ? decode(r.startClosed) : r.startOpen ? decode(r.startOpen) : [],
    startOpen: !r.startClosed && !!r.startOpen,
    end: r.endClosed ? decode(r.endClosed) : r.endOpen ? decode(r.endOpen) : [],
    endOpen: !r.endClosed && !!r.endOpen,
  }));
  return (key) => {
    if (keys.some((k) => k.length === key.length && compareKeys(table, parts, key, k) === 0)) return true;
    return ranges.some((r) => {
      const s = compareKeys(table, parts, key, r.start);
      const e = compareKeys(table, parts, key, r.end);
      const afterStart = r.start.length === 0 || (r.startOpen ? s > 0 : s >= 0);
      const beforeEnd = r.endOpen ? e < 0 && r.end.length > 0 : e <= 0;
      return afterStart && (beforeEnd || (r.end.length === 0 && !r.endOpen));
    });
  };
}
