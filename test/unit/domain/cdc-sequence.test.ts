import fc from 'fast-check';
import {
  backfillSequenceNumber,
  compareChangeSequenceNumbers,
  encodeChangeSequenceNumber,
  parseChangeSequenceNumber,
} from '../../../shared/domain/cdc-sequence';
import { fromNanos, parseTimestamp } from '../../../shared/domain/timestamp';

describe('BigQuery _CHANGE_SEQUENCE_NUMBER order', () => {
  it.each([
    ['7B', '77'],
    ['FFF/ABC', 'FFF/B'],
    ['ABC', 'BA/FFFFFFFF'],
    ['FFF/ABC', 'ABC'],
  ])('documented example: %s > %s', (larger, smaller) => {
    expect(compareChangeSequenceNumbers(larger, smaller)).toBe(1);
    expect(compareChangeSequenceNumbers(smaller, larger)).toBe(-1);
  });

  it('compares sections as unsigned numbers, ignoring case and leading zeros', () => {
    expect(compareChangeSequenceNumbers('00ff/1', 'FF/01')).toBe(0);
    expect(compareChangeSequenceNumbers('FFFFFFFFFFFFFFFF', 'FFFFFFFFFFFFFFFE')).toBe(1);
  });

  it('orders a value below a longer value it is a prefix of (undocumented case, decided)', () => {
    expect(compareChangeSequenceNumbers('ABC', 'ABC/0')).toBe(-1);
    expect(compareChangeSequenceNumbers('ABC/0/0/0', 'ABC/0/0')).toBe(1);
  });

  it.each(['', 'G', '1/2/3/4/5', '12345678901234567', '1//2', '/1', '-1', '0x1'])('rejects %j', (bad) => {
    expect(() => parseChangeSequenceNumber(bad)).toThrow(/invalid _CHANGE_SEQUENCE_NUMBER/);
  });

  it('parses the documented epoch-milliseconds example', () => {
    expect(parseChangeSequenceNumber('18F2EBB6480')).toEqual([BigInt(Date.UTC(2024, 3, 30, 11, 19, 44))]);
  });
});

describe('encoding (commit timestamp ns, record sequence, mod index)', () => {
  it('writes three fixed-width upper-case hex sections', () => {
    const value = encodeChangeSequenceNumber({
      commitTimestamp: parseTimestamp('2024-04-30T11:19:44.000000001Z'),
      recordSequence: '00000010',
      modIndex: 255,
    });
    // 1714475984000000001 ns = 0x17CB0AD2E2422001; record sequence "00000010" is decimal ten.
    expect(value).toBe('17CB0AD2E2422001/000000000000000A/00000000000000FF');
    expect(value.split('/').map((s) => s.length)).toEqual([16, 16, 16]);
    expect(parseChangeSequenceNumber(value)).toEqual([1714475984000000001n, 10n, 255n]);
  });

  it('gives a backfill row (T, 0, 0), below every change after T and equal to nothing before', () => {
    const t = parseTimestamp('2024-01-01T00:00:00Z');
    expect(backfillSequenceNumber(t)).toBe(
      `${(t as bigint).toString(16).toUpperCase().padStart(16, '0')}/${'0'.repeat(16)}/${'0'.repeat(16)}`,
    );
    const later = encodeChangeSequenceNumber({
      commitTimestamp: fromNanos(t + 1n),
      recordSequence: '0',
      modIndex: 0,
    });
    const earlier = encodeChangeSequenceNumber({
      commitTimestamp: fromNanos(t - 1n),
      recordSequence: '99999999',
      modIndex: 9,
    });
    expect(compareChangeSequenceNumbers(later, backfillSequenceNumber(t))).toBe(1);
    expect(compareChangeSequenceNumbers(earlier, backfillSequenceNumber(t))).toBe(-1);
  });

  it.each([
    [{ commitTimestamp: fromNanos(-1n), recordSequence: '0', modIndex: 0 }, /commit timestamp -1/],
    [{ commitTimestamp: fromNanos(1n << 64n), recordSequence: '0', modIndex: 0 }, /does not fit/],
    [
      { commitTimestamp: fromNanos(0n), recordSequence: '18446744073709551616', modIndex: 0 },
      /record sequence/,
    ],
    [{ commitTimestamp: fromNanos(0n), recordSequence: '1a', modIndex: 0 }, /not a digit string/],
    [
      { commitTimestamp: fromNanos(0n), recordSequence: '1', modIndex: 1.5 },
      /mod index 1.5 is not an integer/,
    ],
    [{ commitTimestamp: fromNanos(0n), recordSequence: '1', modIndex: -1 }, /mod index -1/],
  ])('rejects parts BigQuery cannot order (%#)', (parts, message) => {
    expect(() => encodeChangeSequenceNumber(parts)).toThrow(message);
  });

  const u64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
  const triple = fc.tuple(u64, u64, u64);
  const cmp = (a: bigint[], b: bigint[]) => {
    for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
    return 0;
  };
  const encode = ([ts, rs, mi]: [bigint, bigint, bigint]) =>
    encodeChangeSequenceNumber({ commitTimestamp: fromNanos(ts), recordSequence: rs, modIndex: mi });

  it('preserves the lexicographic order of the triples under BigQuery’s rule and plain string order', () => {
    fc.assert(
      fc.property(triple, triple, (a, b) => {
        const expected = cmp(a, b);
        const x = encode(a);
        const y = encode(b);
        expect(compareChangeSequenceNumbers(x, y)).toBe(expected);
        expect(x < y ? -1 : x > y ? 1 : 0).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('preserves order for neighbouring triples that differ in one section', () => {
    fc.assert(
      fc.property(triple, fc.integer({ min: 0, max: 2 }), (a, i) => {
        const b: [bigint, bigint, bigint] = [...a];
        if (b[i]! === (1n << 64n) - 1n) return;
        b[i] = b[i]! + 1n;
        expect(compareChangeSequenceNumbers(encode(a), encode(b))).toBe(-1);
      }),
    );
  });
});
