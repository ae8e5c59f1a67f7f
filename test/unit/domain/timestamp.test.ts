import fc from 'fast-check';
import {
  addNanos,
  bigQueryMicrosText,
  formatTimestamp,
  fromSpannerValue,
  parseTimestamp,
  toBigQueryMicros,
} from '../../../shared/domain/timestamp';

describe('timestamp', () => {
  it('round-trips nanoseconds through RFC 3339', () => {
    const t = parseTimestamp('2024-01-31T12:00:00.123456789Z');
    expect(formatTimestamp(t)).toBe('2024-01-31T12:00:00.123456789Z');
    expect(formatTimestamp(addNanos(t, 1))).toBe('2024-01-31T12:00:00.123456790Z');
  });

  it('reads what the Spanner client returns', () => {
    expect(fromSpannerValue({ getFullTimeString: () => '1706702400123456789' })).toBe(
      parseTimestamp('2024-01-31T12:00:00.123456789Z'),
    );
  });

  it('truncates to BigQuery microseconds toward the past', () => {
    expect(toBigQueryMicros(parseTimestamp('1969-12-31T23:59:59.999999999Z'))).toBe(-1n);
  });
});

describe('timestamp parsing and formatting', () => {
  const {
    addMillis,
    compareTimestamps,
    diffMillis,
    fromEpochMillis,
    fromNanos,
    fromSecondsAndNanos,
    maxTimestamp,
    MAX_TIMESTAMP,
    minTimestamp,
    MIN_TIMESTAMP,
    parseDate,
    toSecondsAndNanos,
    toSpannerParam,
  } = require('../../../shared/domain/timestamp') as typeof import('../../../shared/domain/timestamp');
  const fc = require('fast-check') as typeof import('fast-check');

  it.each([
    ['2024-01-31T12:00:00Z', '2024-01-31T12:00:00.000000000Z'],
    ['2024-01-31T12:00:00.1Z', '2024-01-31T12:00:00.100000000Z'],
    ['2024-01-31T12:00:00.12Z', '2024-01-31T12:00:00.120000000Z'],
    ['2024-01-31T12:00:00.123Z', '2024-01-31T12:00:00.123000000Z'],
    ['2024-01-31T12:00:00.1234Z', '2024-01-31T12:00:00.123400000Z'],
    ['2024-01-31T12:00:00.12345Z', '2024-01-31T12:00:00.123450000Z'],
    ['2024-01-31T12:00:00.123456Z', '2024-01-31T12:00:00.123456000Z'],
    ['2024-01-31T12:00:00.1234567Z', '2024-01-31T12:00:00.123456700Z'],
    ['2024-01-31T12:00:00.12345678Z', '2024-01-31T12:00:00.123456780Z'],
    ['2024-01-31T12:00:00.123456789z', '2024-01-31T12:00:00.123456789Z'],
    ['2024-01-31t12:00:00+00:00', '2024-01-31T12:00:00.000000000Z'],
    ['2024-01-31 14:30:00.5+02:30', '2024-01-31T12:00:00.500000000Z'],
    ['2024-01-31T00:00:00-05:00', '2024-01-31T05:00:00.000000000Z'],
    ['2024-02-29T23:59:59.999999999Z', '2024-02-29T23:59:59.999999999Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000000000Z'],
    ['1969-12-31T23:59:59.999999999Z', '1969-12-31T23:59:59.999999999Z'],
    ['1900-03-01T00:00:00Z', '1900-03-01T00:00:00.000000000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000000000Z'],
    ['9999-12-31T23:59:59.999999999Z', '9999-12-31T23:59:59.999999999Z'],
  ])('parses %s', (text, formatted) => {
    expect(formatTimestamp(parseTimestamp(text))).toBe(formatted);
  });

  it('knows the epoch and the bounds', () => {
    expect(parseTimestamp('1970-01-01T00:00:00Z')).toBe(0n);
    expect(parseTimestamp('1969-12-31T23:59:59.999999999Z')).toBe(-1n);
    expect(parseTimestamp('0001-01-01T00:00:00Z')).toBe(MIN_TIMESTAMP);
    expect(parseTimestamp('9999-12-31T23:59:59.999999999Z')).toBe(MAX_TIMESTAMP);
  });

  it.each([
    '2024-01-31',
    '2024-01-31T12:00:00',
    '2024-01-31T12:00:00.1234567890Z',
    '2024-01-31T12:00:00.Z',
    '2023-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2024-13-01T00:00:00Z',
    '2024-00-01T00:00:00Z',
    '2024-04-31T00:00:00Z',
    '2024-01-01T24:00:00Z',
    '2024-01-01T00:60:00Z',
    '2024-01-01T00:00:60Z',
    '2024-01-01T00:00:00+24:00',
    '2024-01-01T00:00:00+01:60',
    '0000-12-31T23:59:59Z',
    '0001-01-01T00:00:00+00:01',
    '9999-12-31T23:59:59-00:01',
    ' 2024-01-01T00:00:00Z',
    '',
  ])('rejects %j', (text) => {
    expect(() => parseTimestamp(text)).toThrow(/invalid timestamp/);
  });

  it('round-trips any instant in range through RFC 3339', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: MIN_TIMESTAMP, max: MAX_TIMESTAMP }), (ns) => {
        const t = fromNanos(ns);
        expect(parseTimestamp(formatTimestamp(t))).toBe(t);
        expect(parseTimestamp(toSpannerParam(t))).toBe(t);
        const { seconds, nanos } = toSecondsAndNanos(t);
        expect(nanos).toBeGreaterThanOrEqual(0);
        expect(fromSecondsAndNanos(seconds, nanos)).toBe(t);
        expect(toBigQueryMicros(t) * 1000n <= ns && ns < (toBigQueryMicros(t) + 1n) * 1000n).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('orders formatted strings like the instants', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: MIN_TIMESTAMP, max: MAX_TIMESTAMP }),
        fc.bigInt({ min: MIN_TIMESTAMP, max: MAX_TIMESTAMP }),
        (a, b) => {
          const x = formatTimestamp(fromNanos(a));
          const y = formatTimestamp(fromNanos(b));
          expect(compareTimestamps(fromNanos(a), fromNanos(b))).toBe(x < y ? -1 : x > y ? 1 : 0);
        },
      ),
    );
  });

  it('does arithmetic and comparisons in nanoseconds', () => {
    const t = parseTimestamp('2024-01-01T00:00:00Z');
    const u = addMillis(t, 1500.9);
    expect(formatTimestamp(u)).toBe('2024-01-01T00:00:01.500000000Z');
    expect(formatTimestamp(addNanos(t, -1n))).toBe('2023-12-31T23:59:59.999999999Z');
    expect(diffMillis(u, t)).toBe(1500);
    expect(minTimestamp(t, u)).toBe(t);
    expect(maxTimestamp(t, u)).toBe(u);
    expect(compareTimestamps(t, t)).toBe(0);
    expect(compareTimestamps(u, t)).toBe(1);
    expect(fromEpochMillis(1704067200000.7)).toBe(t);
    expect(fromSecondsAndNanos('-1', 999_999_999)).toBe(-1n);
    expect(toSecondsAndNanos(fromNanos(-1n))).toEqual({ seconds: -1n, nanos: 999_999_999 });
  });

  it('reads the client values and rejects malformed ones', () => {
    expect(fromSpannerValue('2024-01-01T00:00:00.5+01:00')).toBe(parseTimestamp('2023-12-31T23:00:00.5Z'));
    expect(fromSpannerValue({ getFullTimeString: () => '-1' })).toBe(-1n);
    expect(() => fromSpannerValue({ getFullTimeString: () => '1.5' })).toThrow(
      /invalid Spanner timestamp value/,
    );
  });

  it.each([
    ['1970-01-01', 0],
    ['1969-12-31', -1],
    ['2024-02-29', 19_782],
    ['0001-01-01', -719_162],
    ['9999-12-31', 2_932_896],
  ])('parses DATE %s to days since the epoch', (text, days) => {
    expect(parseDate(text)).toBe(days);
  });

  it.each(['2023-02-29', '2024-1-01', '0000-01-01', '2024-12-32', 'x'])('rejects DATE %j', (text) => {
    expect(() => parseDate(text)).toThrow(/invalid date/);
  });
});

describe('BigQuery microseconds of a timestamp text', () => {
  const reference = (text: string) => toBigQueryMicros(parseTimestamp(text)).toString();

  it('equals the bigint computation over the whole range, offsets and short fractions included', () => {
    const instant = fc.bigInt({ min: -62_135_596_800_000_000_000n, max: 253_402_300_799_999_999_999n });
    const offset = fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 });
    fc.assert(
      fc.property(instant, offset, fc.integer({ min: 0, max: 9 }), (ns, minutes, digits) => {
        const text = formatTimestamp(parseTimestamp(formatTimestamp(ns as never)));
        const short =
          digits === 9
            ? text
            : text.replace(/\.(\d{9})Z$/, (_m, f: string) => (digits ? `.${f.slice(0, digits)}Z` : 'Z'));
        expect(bigQueryMicrosText(short)).toBe(reference(short));
        // The same instant written with an offset, where it stays inside the range.
        const sign = minutes < 0 ? '-' : '+';
        const abs = Math.abs(minutes);
        const withOffset = short.replace(
          /Z$/,
          `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`,
        );
        let want: string | undefined;
        try {
          want = reference(withOffset);
        } catch {
          want = undefined;
        }
        if (want === undefined) expect(() => bigQueryMicrosText(withOffset)).toThrow(/outside/);
        else expect(bigQueryMicrosText(withOffset)).toBe(want);
      }),
      { numRuns: 5000 },
    );
  });

  it.each([
    '0001-01-01T00:00:00Z',
    '0001-01-01T00:00:00.000000001Z',
    '1677-09-21T00:12:43.145224191Z',
    '1969-12-31T23:59:59.999999999Z',
    '1970-01-01T00:00:00Z',
    '2255-06-05T23:47:34.740991999Z',
    '2255-06-05T23:47:34.740992001Z',
    '9999-12-31T23:59:59.999999999Z',
  ])('is exact at %s', (text) => {
    expect(bigQueryMicrosText(text)).toBe(reference(text));
  });

  it('refuses what parseTimestamp refuses, with its message', () => {
    for (const bad of ['10000-01-01T00:00:00Z', '2024-02-30T00:00:00Z', '0000-12-31T23:59:59Z', 'x']) {
      expect(() => bigQueryMicrosText(bad)).toThrow(/invalid timestamp/);
      expect(() => parseTimestamp(bad)).toThrow(/invalid timestamp/);
    }
    expect(() => bigQueryMicrosText('0001-01-01T00:00:00+00:01')).toThrow(/outside/);
  });
});
