/**
 * Exact decimal arithmetic for NUMERIC (stored as canonical decimal text): a value is `v / 10^s` with a
 * bigint `v`. GoogleSQL NUMERIC has 29 integer and 9 fractional digits; PostgreSQL numeric is unbounded here.
 */
import { Code, SpannerError } from '../hooks';

/** A decimal `v / 10^s`. */
export interface Decimal {
  v: bigint;
  s: number;
}

/** Parses decimal text (`-12.340`, `5`, `.5`, `1e3`). */
export function parseDecimal(text: string): Decimal {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!m || (m[2] === '' && !m[3]))
    throw new SpannerError(Code.OUT_OF_RANGE, `Invalid NUMERIC value: ${text}`);
  const frac = m[3] ?? '';
  let v = BigInt(`${m[2] || '0'}${frac}`);
  let s = frac.length - Number(m[4] ?? 0);
  if (s < 0) {
    v *= 10n ** BigInt(-s);
    s = 0;
  }
  return { v: m[1] === '-' ? -v : v, s };
}

function scaleTo(d: Decimal, s: number): bigint {
  return d.v * 10n ** BigInt(s - d.s);
}

/** Canonical text: no trailing fractional zeros, no leading zeros, `-0` as `0`. */
export function formatDecimal(d: Decimal): string {
  const neg = d.v < 0n;
  const digits = (neg ? -d.v : d.v).toString().padStart(d.s + 1, '0');
  const int = digits.slice(0, digits.length - d.s);
  const frac = digits.slice(digits.length - d.s).replace(/0+$/, '');
  const text = frac ? `${int}.${frac}` : int;
  return neg && text !== '0' ? `-${text}` : text;
}

/** Rounds half away from zero to `s` fractional digits. */
export function roundDecimal(d: Decimal, s: number): Decimal {
  if (d.s <= s) return d;
  const f = 10n ** BigInt(d.s - s);
  const q = d.v / f;
  const r = d.v % f;
  const away = (r < 0n ? -r : r) * 2n >= f ? (d.v < 0n ? -1n : 1n) : 0n;
  return { v: q + away, s };
}

/** a op b for + - * / with `divScale` fractional digits for a quotient. */
export function decimalOp(op: string, a: Decimal, b: Decimal, divScale: number): Decimal {
  const s = Math.max(a.s, b.s);
  switch (op) {
    case '+':
      return { v: scaleTo(a, s) + scaleTo(b, s), s };
    case '-':
      return { v: scaleTo(a, s) - scaleTo(b, s), s };
    case '*':
      return { v: a.v * b.v, s: a.s + b.s };
    default: {
      if (b.v === 0n) throw new SpannerError(Code.OUT_OF_RANGE, 'division by zero');
      // a/b = (a.v * 10^(b.s + k)) / (b.v * 10^a.s) with one extra digit for rounding.
      const k = divScale + 1;
      const num = a.v * 10n ** BigInt(b.s + k);
      const den = b.v * 10n ** BigInt(a.s);
      return roundDecimal({ v: num / den, s: k }, divScale);
    }
  }
}

/** Checks GoogleSQL NUMERIC's range and scale (29 integer digits), rounding to 9 fractional digits. */
export function checkGsqlNumeric(d: Decimal): Decimal {
  const r = roundDecimal(d, 9);
  const limit = 10n ** 38n;
  const v = r.v * 10n ** BigInt(9 - r.s);
  if (v >= limit || v <= -limit)
    throw new SpannerError(Code.OUT_OF_RANGE, `numeric overflow: ${formatDecimal(r)}`);
  return r;
}

/**
 * An order-preserving text key of decimal text: comparing keys as text compares the numbers. Negative
 * numbers use nines' complements so that larger magnitudes sort first; PostgreSQL's NaN sorts last.
 */
export function decimalKey(text: string): string {
  if (text === 'NaN') return 'Q';
  const d = parseDecimal(text);
  if (d.v === 0n) return 'O';
  const neg = d.v < 0n;
  const digits = (neg ? -d.v : d.v).toString().padStart(d.s + 1, '0');
  const int = digits.slice(0, digits.length - d.s).replace(/^0+/, '');
  const frac = digits.slice(digits.length - d.s).replace(/0+$/, '');
  const len = int.length;
  if (!neg) return `P${String(len).padStart(5, '0')}${int}${frac}`;
  const comp = (x: string) => x.replace(/\d/g, (c) => String(9 - Number(c)));
  return `N${String(99999 - len).padStart(5, '0')}${comp(int)}${comp(frac)}~`;
}
