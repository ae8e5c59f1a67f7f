/**
 * Nanosecond-precise timestamps.
 *
 * A commit timestamp is a count of nanoseconds since the Unix epoch held in a `bigint`. It never passes
 * through a JavaScript `Date` (milliseconds), so ordering and window bounds stay exact end to end.
 */

/** Nanoseconds since 1970-01-01T00:00:00Z, branded so a plain bigint is not mistaken for one. */
export type Timestamp = bigint & { readonly __timestamp: unique symbol };

const NS_PER_SECOND = 1_000_000_000n;
const NS_PER_MICRO = 1_000n;
const SECONDS_PER_DAY = 86_400n;

/** Smallest and largest instants Spanner accepts (0001-01-01 .. 9999-12-31T23:59:59.999999999Z). */
export const MIN_TIMESTAMP = fromNanos(-62_135_596_800n * NS_PER_SECOND);
export const MAX_TIMESTAMP = fromNanos(253_402_300_800n * NS_PER_SECOND - 1n);

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Wraps a nanosecond count. */
export function fromNanos(ns: bigint): Timestamp {
  return ns as Timestamp;
}

/**
 * Days since the epoch of a proleptic Gregorian date (Howard Hinnant's days_from_civil). In numbers, not
 * bigints: every intermediate of years 0001..9999 is far inside the safe-integer range, and this runs for
 * every TIMESTAMP value a window maps.
 */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** Inverse of {@link daysFromCivil}: `[year, month, day]`. */
export function civilFromDays(days: bigint): [number, number, number] {
  const z = days + 719_468n;
  const era = (z >= 0n ? z : z - 146_096n) / 146_097n;
  const doe = z - era * 146_097n;
  const yoe = (doe - doe / 1460n + doe / 36_524n - doe / 146_096n) / 365n;
  const doy = doe - (365n * yoe + yoe / 4n - yoe / 100n);
  const mp = (5n * doy + 2n) / 153n;
  const day = doy - (153n * mp + 2n) / 5n + 1n;
  const month = mp < 10n ? mp + 3n : mp - 9n;
  const year = yoe + era * 400n + (month <= 2n ? 1n : 0n);
  return [Number(year), Number(month), Number(day)];
}

/** Days in a month of the proleptic Gregorian calendar. */
export function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}

/** An RFC 3339 timestamp's whole seconds since the epoch and its nine fractional digits. */
interface TimestampParts {
  seconds: number;
  fraction: string;
}

/** The smallest and one past the largest whole second Spanner accepts. */
const MIN_SECONDS = -62_135_596_800;
const END_SECONDS = 253_402_300_800;

function timestampParts(text: string): TimestampParts {
  const m = RFC3339.exec(text);
  if (!m)
    throw new Error(
      `invalid timestamp ${JSON.stringify(text)}: expected RFC 3339, e.g. 2024-01-31T12:00:00.123456789Z`,
    );
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = Number(m[6]);
  if (
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysInMonth(year, month) ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    throw new Error(`invalid timestamp ${JSON.stringify(text)}: a date or time field is out of range`);
  }
  let offsetSeconds = 0;
  if (!m[8]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) throw new Error(`invalid timestamp ${JSON.stringify(text)}: offset out of range`);
    offsetSeconds = (oh * 3600 + om * 60) * (m[9] === '-' ? -1 : 1);
  }
  // Seconds fit a double exactly (|s| < 2^38); the fraction is below one second, so the range is on seconds.
  const seconds =
    daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds;
  if (seconds < MIN_SECONDS || seconds >= END_SECONDS) {
    throw new Error(`invalid timestamp ${JSON.stringify(text)}: outside 0001-01-01..9999-12-31`);
  }
  const digits = m[7] ?? '';
  return { seconds, fraction: digits.length === 9 ? digits : digits.padEnd(9, '0') };
}

/**
 * Parses RFC 3339 with 0–9 fractional digits and `Z` or a numeric offset.
 * @throws Error naming the input when it is not a valid timestamp.
 */
export function parseTimestamp(text: string): Timestamp {
  const { seconds, fraction } = timestampParts(text);
  return fromNanos(BigInt(seconds) * NS_PER_SECOND + BigInt(fraction));
}

/** Microseconds a double holds exactly (2^53). */
const SAFE_MICROS = 9_007_199_254_740_992;

/**
 * {@link toBigQueryMicros} of {@link parseTimestamp}, as decimal text: the form every TIMESTAMP value takes
 * on its way to BigQuery. Computed in doubles where the count is exact in one (about the years 1685..2255),
 * else in bigints; truncated toward the past like {@link toBigQueryMicros}.
 * @throws Error naming the input when it is not a valid timestamp.
 */
export function bigQueryMicrosText(text: string): string {
  const { seconds, fraction } = timestampParts(text);
  // The fraction is never negative, so the floor of ns / 1000 is seconds·10^6 plus its first six digits.
  const micros = seconds * 1_000_000 + Number(fraction.slice(0, 6));
  if (micros > -SAFE_MICROS && micros < SAFE_MICROS && seconds * 1_000_000 > -SAFE_MICROS)
    return String(micros);
  return (BigInt(seconds) * 1_000_000n + BigInt(fraction.slice(0, 6))).toString();
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * Parses a civil date `YYYY-MM-DD` (0001-01-01 .. 9999-12-31) to days since 1970-01-01, the form BigQuery's
 * DATE takes in the Storage Write API.
 * @throws Error naming the input when it is not a valid date.
 */
export function parseDate(text: string): number {
  const m = DATE.exec(text);
  const year = m ? Number(m[1]) : 0;
  const month = m ? Number(m[2]) : 0;
  const day = m ? Number(m[3]) : 0;
  if (!m || year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    throw new Error(
      `invalid date ${JSON.stringify(text)}: expected YYYY-MM-DD between 0001-01-01 and 9999-12-31`,
    );
  }
  return daysFromCivil(year, month, day);
}

const pad = (n: number | bigint, width: number) => n.toString().padStart(width, '0');

/** Formats as RFC 3339 in UTC with exactly nine fractional digits, e.g. `2024-01-31T12:00:00.000000001Z`. */
export function formatTimestamp(t: Timestamp): string {
  const { seconds, nanos } = toSecondsAndNanos(t);
  const days = floorDiv(seconds, SECONDS_PER_DAY);
  const secOfDay = Number(seconds - days * SECONDS_PER_DAY);
  const [y, mo, d] = civilFromDays(days);
  const hh = Math.floor(secOfDay / 3600);
  const mm = Math.floor((secOfDay % 3600) / 60);
  const ss = secOfDay % 60;
  return `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(hh, 2)}:${pad(mm, 2)}:${pad(ss, 2)}.${pad(nanos, 9)}Z`;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** Whole seconds (floored) and the nanoseconds within that second (always 0..999,999,999). */
export function toSecondsAndNanos(t: Timestamp): { seconds: bigint; nanos: number } {
  const seconds = floorDiv(t, NS_PER_SECOND);
  return { seconds, nanos: Number(t - seconds * NS_PER_SECOND) };
}

/** Builds a timestamp from a protobuf-style `{seconds, nanos}` pair. */
export function fromSecondsAndNanos(seconds: bigint | number | string, nanos: number): Timestamp {
  return fromNanos(BigInt(seconds) * NS_PER_SECOND + BigInt(nanos));
}

/** Adds (or, with a negative count, subtracts) nanoseconds. */
export function addNanos(t: Timestamp, ns: bigint | number): Timestamp {
  return fromNanos(t + BigInt(ns));
}

/** Adds milliseconds (config durations are in milliseconds). */
export function addMillis(t: Timestamp, ms: number): Timestamp {
  return fromNanos(t + BigInt(Math.trunc(ms)) * 1_000_000n);
}

/** Three-way comparison, for sorting. */
export function compareTimestamps(a: Timestamp, b: Timestamp): -1 | 0 | 1 {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The earlier of two timestamps. */
export function minTimestamp(a: Timestamp, b: Timestamp): Timestamp {
  return a <= b ? a : b;
}

/** The later of two timestamps. */
export function maxTimestamp(a: Timestamp, b: Timestamp): Timestamp {
  return a >= b ? a : b;
}

/** Difference `a - b` in whole milliseconds (for lag figures only, never for ordering). */
export function diffMillis(a: Timestamp, b: Timestamp): number {
  return Number((a - b) / 1_000_000n);
}

/** BigQuery TIMESTAMP value: microseconds since the epoch, truncated toward the past. */
export function toBigQueryMicros(t: Timestamp): bigint {
  return floorDiv(t, NS_PER_MICRO);
}

/** A wall-clock reading (milliseconds, e.g. `Date.now()`) as a timestamp. Only for "now", never for data. */
export function fromEpochMillis(ms: number): Timestamp {
  return fromNanos(BigInt(Math.trunc(ms)) * 1_000_000n);
}

/**
 * The form the Spanner client accepts for a TIMESTAMP parameter: its `PreciseDate` is constructed from this
 * RFC 3339 string with nine fractional digits, so no precision is lost (the adapter does `new PreciseDate(s)`).
 */
export function toSpannerParam(t: Timestamp): string {
  return formatTimestamp(t);
}

/** What the Spanner client returns for a TIMESTAMP: a `PreciseDate`, seen structurally. */
export interface PreciseDateLike {
  getFullTimeString(): string;
}

/**
 * Reads a timestamp from what the Spanner client returns: a `PreciseDate` (through its nanosecond-exact
 * `getFullTimeString`) or an RFC 3339 string (JSON mode, PostgreSQL JSONB).
 */
export function fromSpannerValue(value: PreciseDateLike | string): Timestamp {
  if (typeof value === 'string') return parseTimestamp(value);
  const full = value.getFullTimeString();
  if (!/^-?\d+$/.test(full)) throw new Error(`invalid Spanner timestamp value: ${JSON.stringify(full)}`);
  return fromNanos(BigInt(full));
}
