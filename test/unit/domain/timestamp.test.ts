import {
  addNanos,
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
