/** Typing producer values by column type: every type of both dialects, its extremes, and what is refused. */
import type { SpannerType } from '../../../../shared/domain/change-record';
import { plain } from '../../../../shared/domain/log-values';
import { COMMIT_TIMESTAMP, typeValue, wireBytes } from '../../../../shared/domain/writer/values';

const t = (code: string, extra: Partial<SpannerType> = {}): SpannerType => ({ code, ...extra });
const ok = (value: unknown, type: SpannerType) => {
  const r = typeValue(value, type);
  if (!r.ok) throw new Error(r.problem);
  return r.value;
};
const problem = (value: unknown, type: SpannerType) => {
  const r = typeValue(value, type);
  if (r.ok) throw new Error(`accepted ${JSON.stringify(value)} as ${type.code}`);
  // The value is marked as a row's (log-values.ts); the producer reads it plain.
  return plain(r.problem);
};

test('INT64: decimal strings over the whole range, numbers only within 2^53', () => {
  const int = t('INT64');
  expect(ok('9223372036854775807', int)).toBe('9223372036854775807');
  expect(ok('-9223372036854775808', int)).toBe('-9223372036854775808');
  expect(ok('007', int)).toBe('7');
  expect(ok(9007199254740991, int)).toBe('9007199254740991');
  expect(ok(-9007199254740991, int)).toBe('-9007199254740991');
  expect(problem(9007199254740992, int)).toMatch(
    /expected INT64 \(a decimal string, or a number within ±2\^53\), got a number 9007199254740992/,
  );
  expect(problem('9223372036854775808', int)).toMatch(/out of the INT64 range/);
  expect(problem(1.5, int)).toMatch(/INT64/);
  expect(problem('1e3', int)).toMatch(/INT64/);
  expect(problem(true, int)).toMatch(/got a boolean true/);
});

test('FLOAT64 and FLOAT32: numbers, decimal strings and the three non-finite spellings', () => {
  expect(ok(1.5, t('FLOAT64'))).toBe(1.5);
  expect(ok(2, t('FLOAT64'))).toBe(2);
  expect(ok('-0.25', t('FLOAT64'))).toBe(-0.25);
  expect(ok(Number.MAX_VALUE, t('FLOAT64'))).toBe(Number.MAX_VALUE);
  for (const s of ['NaN', 'Infinity', '-Infinity']) expect(ok(s, t('FLOAT64'))).toBe(s);
  expect(problem('nan', t('FLOAT64'))).toMatch(/"NaN", "Infinity", "-Infinity"/);
  expect(ok(3.4028234663852886e38, t('FLOAT32'))).toBe(3.4028234663852886e38);
  expect(problem(3.5e38, t('FLOAT32'))).toMatch(/out of the FLOAT32 range/);
  expect(problem({}, t('FLOAT64'))).toMatch(/got an object \{\}/);
});

test('NUMERIC: strings only; GoogleSQL precision 38 scale 9, PostgreSQL any size and NaN', () => {
  const num = t('NUMERIC');
  expect(ok('99999999999999999999999999999.999999999', num)).toBe('99999999999999999999999999999.999999999');
  expect(ok('-0.50', num)).toBe('-0.5');
  expect(ok('.5', num)).toBe('0.5');
  expect(ok('-0', num)).toBe('0');
  expect(problem('1.0000000001', num)).toMatch(/9 after/);
  expect(problem('100000000000000000000000000000', num)).toMatch(/29 digits/);
  expect(problem(1.5, num)).toMatch(/a decimal string/);
  const pg = t('NUMERIC', { typeAnnotation: 'PG_NUMERIC' });
  expect(ok('NaN', pg)).toBe('NaN');
  expect(ok(`1${'0'.repeat(60)}.${'1'.repeat(40)}`, pg)).toBe(`1${'0'.repeat(60)}.${'1'.repeat(40)}`);
  expect(problem('NaN', num)).toMatch(/NUMERIC/);
});

test('TIMESTAMP: RFC 3339 with nanoseconds and offsets, normalised to UTC; the commit-timestamp placeholder', () => {
  const ts = t('TIMESTAMP');
  expect(ok('2024-02-29T23:59:59.123456789+01:00', ts)).toBe('2024-02-29T22:59:59.123456789Z');
  expect(ok('0001-01-01T00:00:00Z', ts)).toBe('0001-01-01T00:00:00.000000000Z');
  expect(ok('9999-12-31T23:59:59.999999999Z', ts)).toBe('9999-12-31T23:59:59.999999999Z');
  expect(ok(COMMIT_TIMESTAMP, ts)).toBe(COMMIT_TIMESTAMP);
  expect(problem('2023-02-29T00:00:00Z', ts)).toMatch(/RFC 3339/);
  expect(problem(1700000000000, ts)).toMatch(/got a number/);
});

test('DATE, BOOL, STRING, BYTES, JSON, UUID, INTERVAL, ENUM, PROTO', () => {
  expect(ok('2000-02-29', t('DATE'))).toBe('2000-02-29');
  expect(problem('1900-02-29', t('DATE'))).toMatch(/YYYY-MM-DD/);
  expect(ok(false, t('BOOL'))).toBe(false);
  expect(problem('true', t('BOOL'))).toMatch(/true or false/);
  expect(ok('ünïcödé ✓', t('STRING'))).toBe('ünïcödé ✓');
  expect(problem(5, t('STRING'))).toMatch(/a string/);
  expect(ok('AAEC/w==', t('BYTES'))).toBe('AAEC/w==');
  expect(problem('not base64!', t('BYTES'))).toMatch(/base64/);
  expect(problem('AAE', t('BYTES'))).toMatch(/base64/);
  expect(ok({ b: [1, null], a: 'x' }, t('JSON'))).toBe('{"b":[1,null],"a":"x"}');
  expect(ok('text', t('JSON', { typeAnnotation: 'PG_JSONB' }))).toBe('"text"');
  expect(ok('0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0', t('UUID'))).toBe('0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0');
  expect(problem('nope', t('UUID'))).toMatch(/UUID/);
  expect(ok('P1Y2M3DT4H', t('INTERVAL'))).toBe('P1Y2M3DT4H');
  expect(ok(3, t('ENUM', { protoTypeFqn: 'x.E' }))).toBe('3');
  expect(ok('CgA=', t('PROTO', { protoTypeFqn: 'x.M' }))).toBe('CgA=');
  expect(problem('x', t('GRAPH'))).toMatch(/cannot be written by the writer/);
});

test('JSON: a number that parsing has changed is refused, naming where it is in the value', () => {
  const j = t('JSON');
  // Integers beyond ±2^53 were rounded by the body's JSON parsing (9007199254740993 reads as ...992); a
  // number beyond a double's range reads as Infinity, which JSON.stringify would turn into null.
  expect(problem(JSON.parse('{"a": {"ids": [1, 9007199254740993]}}'), j)).toMatch(
    /JSON number at \$\.a\.ids\[1\] \(9007199254740992 as parsed\) is an integer beyond ±2\^53/,
  );
  expect(problem(JSON.parse('{"x": 1e400}'), j)).toMatch(
    /JSON number at \$\.x is beyond the range of a double/,
  );
  expect(problem(JSON.parse('[-1e400]'), j)).toMatch(/at \$\[0\]/);
  expect(problem({ 'a b': -9007199254740992 }, j)).toMatch(/at \$\["a b"\]/);
  expect(problem(2 ** 60, t('JSON', { typeAnnotation: 'PG_JSONB' }))).toMatch(/at \$ /);
  expect(problem([{ n: 2 ** 53 }], t('ARRAY', { arrayElementType: j }))).toMatch(/^\[0\]: .*at \$\.n /);
  // Safe integers and any non-integral double are kept (Spanner keeps a fraction as a double itself).
  expect(ok({ n: 9007199254740991, m: -9007199254740991, f: 0.1, e: 1.5e-300 }, j)).toBe(
    '{"n":9007199254740991,"m":-9007199254740991,"f":0.1,"e":1.5e-300}',
  );
});

test('ARRAY: each element typed, NULL elements kept, the failing element named', () => {
  const arr = t('ARRAY', { arrayElementType: t('INT64') });
  expect(ok(['1', 2, null], arr)).toEqual(['1', '2', null]);
  expect(ok(null, arr)).toBeNull();
  expect(problem(['1', 'x'], arr)).toMatch(/^\[1\]: expected INT64/);
  expect(problem('1', arr)).toMatch(/an array/);
});

test('bytes as the service sees them: BYTES at their base64 length, strings in UTF-8', () => {
  expect(wireBytes('AAAA')).toBe(4);
  expect(wireBytes('é')).toBe(2);
  expect(wireBytes(1.5)).toBe(8);
  expect(wireBytes([true, null, 'ab'])).toBe(4);
});
