/**
 * Date and time functions on stored values (TIMESTAMP as fixed-width RFC 3339 text, DATE as `YYYY-MM-DD`).
 * Spanner evaluates civil-time parts (dates of timestamps, EXTRACT, truncation to days or longer) in its
 * default time zone, America/Los_Angeles; the offset comes from the platform's time-zone database.
 */
import {
  civilFromDays,
  daysFromCivil,
  daysInMonth,
  formatTimestamp,
  fromNanos,
  parseTimestamp,
} from '../../../../shared/domain/timestamp';
import { Code, SpannerError } from '../hooks';

const NS_PER_S = 1_000_000_000n;
const NS_PER_DAY = 86_400n * NS_PER_S;
const ZONE = 'America/Los_Angeles';
const zoneFormat = new Intl.DateTimeFormat('en-US', {
  timeZone: ZONE,
  hourCycle: 'h23',
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
  second: 'numeric',
});

/** Nanoseconds per unit of the parts TIMESTAMP_ADD / DIFF / TRUNC take. */
export const UNIT_NS: Record<string, bigint> = {
  NANOSECOND: 1n,
  MICROSECOND: 1000n,
  MILLISECOND: 1_000_000n,
  SECOND: NS_PER_S,
  MINUTE: 60n * NS_PER_S,
  HOUR: 3600n * NS_PER_S,
  DAY: NS_PER_DAY,
};

function outOfRange(message: string): never {
  throw new SpannerError(Code.OUT_OF_RANGE, message);
}

/** Stored TIMESTAMP text → ns. */
export function tsNs(text: string): bigint {
  return parseTimestamp(text);
}

/** ns → stored TIMESTAMP text (checking Spanner's range). */
export function nsTs(ns: bigint): string {
  try {
    return formatTimestamp(parseTimestamp(formatTimestamp(fromNanos(ns))));
  } catch {
    return outOfRange('Timestamp value is out of range');
  }
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** The zone's offset from UTC (ns) at an instant. */
function offsetNs(utcNs: bigint): bigint {
  const ms = Number(floorDiv(utcNs, 1_000_000n));
  const parts = Object.fromEntries(zoneFormat.formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
  const local = Date.UTC(
    Number(parts.year),
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  );
  return BigInt(local - Math.floor(ms / 1000) * 1000) * 1_000_000n;
}

/** Civil fields of an instant in the default zone. */
export function civil(utcNs: bigint): { days: bigint; nsOfDay: bigint; y: number; m: number; d: number } {
  const local = utcNs + offsetNs(utcNs);
  const days = floorDiv(local, NS_PER_DAY);
  const [y, m, d] = civilFromDays(days);
  return { days, nsOfDay: local - days * NS_PER_DAY, y, m, d };
}

/** The instant of a civil time (days since epoch + ns of day) in the default zone. */
export function fromCivil(days: bigint, nsOfDay = 0n): bigint {
  const local = days * NS_PER_DAY + nsOfDay;
  let utc = local - offsetNs(local);
  utc = local - offsetNs(utc);
  return utc;
}

/** `YYYY-MM-DD` → days since the epoch. */
export function dateDays(text: string): bigint {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return outOfRange(`Invalid DATE value: ${text}`);
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return outOfRange(`Invalid DATE value: ${text}`);
  return BigInt(daysFromCivil(y, mo, d));
}

/** Days since the epoch → `YYYY-MM-DD` (checking 0001..9999). */
export function daysDate(days: bigint): string {
  const [y, m, d] = civilFromDays(days);
  if (y < 1 || y > 9999) return outOfRange('DATE value is out of range');
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** Adds whole months, clamping the day to the month's last (DATE_ADD's rule). */
export function addMonths(days: bigint, months: number): bigint {
  const [y, m, d] = civilFromDays(days);
  const total = y * 12 + (m - 1) + months;
  const ny = Math.floor(total / 12);
  const nm = total - ny * 12 + 1;
  return BigInt(daysFromCivil(ny, nm, Math.min(d, daysInMonth(ny, nm))));
}

const MONTHS: Record<string, number> = { MONTH: 1, QUARTER: 3, YEAR: 12 };

/** DATE_ADD(date, INTERVAL n part). */
export function dateAdd(date: string, n: bigint, part: string): string {
  const days = dateDays(date);
  if (part === 'DAY') return daysDate(days + n);
  if (part === 'WEEK') return daysDate(days + 7n * n);
  const months = MONTHS[part];
  if (!months) return outOfRange(`Unsupported date part ${part} in DATE_ADD`);
  return daysDate(addMonths(days, Number(n) * months));
}

/** DATE_DIFF(a, b, part). */
export function dateDiff(a: string, b: string, part: string): bigint {
  const [da, db] = [dateDays(a), dateDays(b)];
  if (part === 'DAY') return da - db;
  if (part === 'WEEK') return (floorDiv(da + 4n, 7n) - floorDiv(db + 4n, 7n)) as bigint;
  const [ya, ma] = civilFromDays(da);
  const [yb, mb] = civilFromDays(db);
  const months = BigInt(ya * 12 + ma - (yb * 12 + mb));
  if (part === 'MONTH') return months;
  if (part === 'QUARTER')
    return BigInt(Math.floor((ya * 12 + ma - 1) / 3) - Math.floor((yb * 12 + mb - 1) / 3));
  if (part === 'YEAR') return BigInt(ya - yb);
  return outOfRange(`Unsupported date part ${part} in DATE_DIFF`);
}

/** Truncates days since the epoch to a part (WEEK starts on Sunday). */
export function truncDays(days: bigint, part: string): bigint {
  const [y, m] = civilFromDays(days);
  switch (part) {
    case 'DAY':
      return days;
    case 'WEEK':
      return days - ((((days + 4n) % 7n) + 7n) % 7n);
    case 'MONTH':
      return BigInt(daysFromCivil(y, m, 1));
    case 'QUARTER':
      return BigInt(daysFromCivil(y, m - ((m - 1) % 3), 1));
    case 'YEAR':
      return BigInt(daysFromCivil(y, 1, 1));
    default:
      return outOfRange(`Unsupported date part ${part}`);
  }
}

/** TIMESTAMP_TRUNC(ts, part): sub-day parts in UTC, longer ones in the default zone. */
export function tsTrunc(text: string, part: string): string {
  const ns = tsNs(text);
  const unit = UNIT_NS[part];
  if (unit && part !== 'DAY') return nsTs(floorDiv(ns, unit) * unit);
  return nsTs(fromCivil(truncDays(civil(ns).days, part)));
}

/** EXTRACT(part FROM DATE or TIMESTAMP); `DATE` of a timestamp is its civil date. */
export function extract(part: string, text: string, isTimestamp: boolean): bigint | string {
  const c = isTimestamp ? civil(tsNs(text)) : { days: dateDays(text), nsOfDay: 0n, ...ymd(dateDays(text)) };
  const dow = Number((((c.days + 4n) % 7n) + 7n) % 7n);
  const yearStart = BigInt(daysFromCivil(c.y, 1, 1));
  switch (part) {
    case 'YEAR':
      return BigInt(c.y);
    case 'MONTH':
      return BigInt(c.m);
    case 'DAY':
      return BigInt(c.d);
    case 'QUARTER':
      return BigInt(Math.floor((c.m - 1) / 3) + 1);
    case 'DAYOFWEEK':
      return BigInt(dow + 1);
    case 'DAYOFYEAR':
      return c.days - yearStart + 1n;
    case 'WEEK':
      return (c.days - yearStart + BigInt(Number(((yearStart + 4n) % 7n) + 7n) % 7)) / 7n;
    case 'DATE':
      return daysDate(c.days);
    default: {
      const unit = UNIT_NS[part];
      if (!unit || !isTimestamp) return outOfRange(`EXTRACT of ${part} is not supported by the emulator`);
      const within: Record<string, bigint> = {
        HOUR: NS_PER_DAY,
        MINUTE: UNIT_NS.HOUR as bigint,
        SECOND: UNIT_NS.MINUTE as bigint,
      };
      return (c.nsOfDay % (within[part] ?? NS_PER_S)) / unit;
    }
  }
}

function ymd(days: bigint): { y: number; m: number; d: number } {
  const [y, m, d] = civilFromDays(days);
  return { y, m, d };
}

/** `2008-12-25 07:30:00.5-08`: a TIMESTAMP cast to STRING (default zone, trailing zeros trimmed by 3). */
export function tsToString(text: string): string {
  const ns = tsNs(text);
  const off = offsetNs(ns);
  const c = civil(ns);
  const secs = c.nsOfDay / NS_PER_S;
  const nanos = Number(c.nsOfDay % NS_PER_S);
  const two = (n: number | bigint) => String(n).padStart(2, '0');
  let frac = nanos === 0 ? '' : String(nanos).padStart(9, '0');
  while (frac.length > 3 && frac.endsWith('000')) frac = frac.slice(0, -3);
  const offMin = Number(off / 60_000_000_000n);
  const sign = offMin < 0 ? '-' : '+';
  const abs = Math.abs(offMin);
  const zone = `${sign}${two(Math.floor(abs / 60))}${abs % 60 ? `:${two(abs % 60)}` : ''}`;
  return `${daysDate(c.days)} ${two(secs / 3600n)}:${two((secs / 60n) % 60n)}:${two(secs % 60n)}${frac ? `.${frac}` : ''}${zone}`;
}

/** A string → TIMESTAMP: RFC 3339 / `YYYY-MM-DD[ HH:MM:SS[.f]][zone]`; no zone means the default zone. */
export function stringToTs(text: string): string {
  const t = text.trim();
  const m =
    /^(\d{4}-\d{1,2}-\d{1,2})(?:[Tt ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|z|UTC|[+-]\d{1,2}(?::?\d{2})?)?$/.exec(
      t,
    );
  if (!m) return outOfRange(`Invalid timestamp: '${text}'`);
  const [y, mo, d] = (m[1] as string).split('-').map(Number) as [number, number, number];
  const days = dateDays(
    `${String(y).padStart(4, '0')}-${String(mo).padStart(2, '0')}-${String(d).padStart(2, '0')}`,
  );
  const nsOfDay =
    (BigInt(Number(m[2] ?? 0)) * 3600n + BigInt(Number(m[3] ?? 0)) * 60n + BigInt(Number(m[4] ?? 0))) *
      NS_PER_S +
    BigInt((m[5] ?? '').padEnd(9, '0') || '0');
  const zone = m[6];
  if (!zone) return nsTs(fromCivil(days, nsOfDay));
  if (/^(Z|z|UTC)$/.test(zone)) return nsTs(days * NS_PER_DAY + nsOfDay);
  const zm = /^([+-])(\d{1,2}):?(\d{2})?$/.exec(zone) as RegExpExecArray;
  const off = (BigInt(Number(zm[2])) * 60n + BigInt(Number(zm[3] ?? 0))) * 60n * NS_PER_S;
  return nsTs(days * NS_PER_DAY + nsOfDay - (zm[1] === '-' ? -off : off));
}
