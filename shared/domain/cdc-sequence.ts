/**
 * BigQuery CDC `_CHANGE_SEQUENCE_NUMBER` values.
 *
 * BigQuery keeps, per primary key, the row with the largest sequence number. The value is up to four
 * `/`-separated sections of at most 16 hex digits, compared section by section as unsigned numbers. We emit
 * exactly three fixed-width sections — commit timestamp in nanoseconds / record sequence / mod index — so
 * the order BigQuery applies is the change stream's order for one key, and a plain string comparison of two
 * of our values agrees with BigQuery's rule.
 */
import type { Timestamp } from './timestamp';

const SECTION_WIDTH = 16;
const MAX_SECTION = (1n << 64n) - 1n;
const SEQUENCE_PATTERN = /^[0-9A-Fa-f]{1,16}(\/[0-9A-Fa-f]{1,16}){0,3}$/;

/** A `_CHANGE_SEQUENCE_NUMBER` string in BigQuery's format. */
export type ChangeSequenceNumber = string & { readonly __changeSequenceNumber: unique symbol };

/** The three parts a change is ordered by within one primary key. */
export interface SequenceParts {
  commitTimestamp: Timestamp;
  /** `record_sequence` of the data-change record (digit string or bigint). */
  recordSequence: string | bigint;
  /** Index of the mod within its record. */
  modIndex: number | bigint;
}

function section(name: string, value: bigint): string {
  if (value < 0n || value > MAX_SECTION) {
    throw new RangeError(`${name} ${value} does not fit an unsigned 64-bit sequence section`);
  }
  return value.toString(16).toUpperCase().padStart(SECTION_WIDTH, '0');
}

function toBigInt(name: string, value: string | number | bigint): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`${name} ${value} is not an integer`);
    return BigInt(value);
  }
  if (!/^\d+$/.test(value)) throw new RangeError(`${name} ${JSON.stringify(value)} is not a digit string`);
  return BigInt(value);
}

/** One remembered (input → section) pair: a record's mods share their commit timestamp and record sequence. */
interface Memo<T> {
  input: T | undefined;
  section: string;
}

const lastTimestamp: Memo<bigint> = { input: undefined, section: '' };
const lastRecordSequence: Memo<string | bigint> = { input: undefined, section: '' };

function memoSection<T extends string | bigint>(memo: Memo<T>, name: string, value: T): string {
  if (memo.input !== value) {
    // Validate before remembering, so an invalid value throws every time.
    const text = section(name, toBigInt(name, value));
    memo.input = value;
    memo.section = text;
  }
  return memo.section;
}

function modIndexSection(value: number | bigint): string {
  // The common case, a small non-negative integer, needs no bigint.
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) {
    return value.toString(16).toUpperCase().padStart(SECTION_WIDTH, '0');
  }
  return section('mod index', toBigInt('mod index', value));
}

/**
 * Encodes (commit timestamp ns, record sequence, mod index) as three 16-digit upper-case hex sections.
 * @throws RangeError for a pre-1970 timestamp or a part beyond 64 bits (BigQuery sections are unsigned).
 */
export function encodeChangeSequenceNumber(parts: SequenceParts): ChangeSequenceNumber {
  const timestamp = memoSection(lastTimestamp, 'commit timestamp', parts.commitTimestamp);
  const recordSequence = memoSection(lastRecordSequence, 'record sequence', parts.recordSequence);
  return `${timestamp}/${recordSequence}/${modIndexSection(parts.modIndex)}` as ChangeSequenceNumber;
}

/**
 * The sequence number of a backfill row at snapshot time T: (T, 0, 0). Any stream change after T is larger
 * and wins; every change at or before T is already contained in the snapshot.
 */
export function backfillSequenceNumber(snapshotTimestamp: Timestamp): ChangeSequenceNumber {
  return encodeChangeSequenceNumber({ commitTimestamp: snapshotTimestamp, recordSequence: 0n, modIndex: 0 });
}

/** Splits a value into its sections as unsigned numbers. @throws Error when the format is not BigQuery's. */
export function parseChangeSequenceNumber(value: string): bigint[] {
  if (!SEQUENCE_PATTERN.test(value)) {
    throw new Error(
      `invalid _CHANGE_SEQUENCE_NUMBER ${JSON.stringify(value)}: expected 1-4 sections of 1-16 hex digits separated by '/'`,
    );
  }
  return value.split('/').map((s) => BigInt(`0x${s}`));
}

/**
 * BigQuery's documented order: compare the first sections as unsigned numbers and move to the next only
 * when all earlier ones are equal. How a value compares with a longer value it is a prefix of is not
 * documented; here the shorter one is smaller (our own values always have three sections).
 */
export function compareChangeSequenceNumbers(a: string, b: string): -1 | 0 | 1 {
  const x = parseChangeSequenceNumber(a);
  const y = parseChangeSequenceNumber(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const p = x[i]!;
    const q = y[i]!;
    if (p !== q) return p < q ? -1 : 1;
  }
  return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
}
