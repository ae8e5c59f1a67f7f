import { bigQueryFieldOf, bigQueryTypeOf, replicaTableSchema } from '../../../shared/domain/bigquery-schema';
import type { JsonValue, SpannerType } from '../../../shared/domain/change-record';
import { UnrepresentableError } from '../../../shared/domain/record-errors';
import { formatSpannerType, parseSpannerTypeName, parseTypeJson } from '../../../shared/domain/spanner-types';
import { toWriterValue, type ValueIssue } from '../../../shared/domain/value-mapping';

const T = (code: string, extra: Partial<SpannerType> = {}): SpannerType => ({ code, ...extra });
const A = (element: SpannerType): SpannerType => ({ code: 'ARRAY', arrayElementType: element });

/** [spanner type, BigQuery type, mod JSON value, JSON writer value] — every column type of both dialects. */
const EVERY_TYPE: [string, SpannerType, string, unknown, unknown][] = [
  ['BOOL', T('BOOL'), 'BOOL', true, true],
  ['INT64 as string', T('INT64'), 'INT64', '-9223372036854775808', '-9223372036854775808'],
  ['INT64 as number', T('INT64'), 'INT64', 42, '42'],
  ['PG oid', T('INT64', { typeAnnotation: 'PG_OID' }), 'INT64', '7', '7'],
  ['FLOAT32', T('FLOAT32'), 'FLOAT64', 1.5, 1.5],
  ['FLOAT64', T('FLOAT64'), 'FLOAT64', -0.25, -0.25],
  ['FLOAT64 NaN', T('FLOAT64'), 'FLOAT64', 'NaN', Number.NaN],
  ['FLOAT64 Infinity', T('FLOAT64'), 'FLOAT64', 'Infinity', Number.POSITIVE_INFINITY],
  ['FLOAT64 -Infinity', T('FLOAT64'), 'FLOAT64', '-Infinity', Number.NEGATIVE_INFINITY],
  ['FLOAT64 as text', T('FLOAT64'), 'FLOAT64', '2.5e3', 2500],
  ['NUMERIC', T('NUMERIC'), 'NUMERIC', '-00012.500000000', '-12.500000000'],
  [
    'NUMERIC max',
    T('NUMERIC'),
    'NUMERIC',
    `${'9'.repeat(29)}.${'9'.repeat(9)}`,
    `${'9'.repeat(29)}.${'9'.repeat(9)}`,
  ],
  ['PG NUMERIC', T('NUMERIC', { typeAnnotation: 'PG_NUMERIC' }), 'BIGNUMERIC', '+1.5', '1.5'],
  ['STRING', T('STRING'), 'STRING', 'héllo', 'héllo'],
  ['BYTES', T('BYTES'), 'BYTES', 'AQID', 'AQID'],
  ['DATE', T('DATE'), 'DATE', '1970-01-02', 1],
  ['DATE before 1970', T('DATE'), 'DATE', '1969-12-31', -1],
  ['DATE leap day', T('DATE'), 'DATE', '2000-02-29', 11_016],
  ['TIMESTAMP', T('TIMESTAMP'), 'TIMESTAMP', '2024-01-01T00:00:00.123456789Z', '1704067200123456'],
  ['TIMESTAMP pre-1970', T('TIMESTAMP'), 'TIMESTAMP', '1969-12-31T23:59:59.9999995Z', '-1'],
  ['JSON text', T('JSON'), 'JSON', '{"a":[1,2]}', '{"a":[1,2]}'],
  ['JSON object', T('JSON'), 'JSON', { a: 1 }, '{"a":1}'],
  ['PG JSONB', T('JSON', { typeAnnotation: 'PG_JSONB' }), 'JSON', '{"b": true}', '{"b": true}'],
  [
    'UUID',
    T('UUID'),
    'STRING',
    '4f0e0e1e-0d6e-4b8a-9c55-1a2b3c4d5e6f',
    '4f0e0e1e-0d6e-4b8a-9c55-1a2b3c4d5e6f',
  ],
  ['INTERVAL', T('INTERVAL'), 'STRING', 'P1Y2M3DT4H5M6.5S', 'P1Y2M3DT4H5M6.5S'],
  ['PROTO', T('PROTO', { protoTypeFqn: 'pkg.Msg' }), 'BYTES', 'CgVoZWxsbw==', 'CgVoZWxsbw=='],
  ['ENUM', T('ENUM', { protoTypeFqn: 'pkg.E' }), 'INT64', '3', '3'],
  ['ARRAY<INT64>', A(T('INT64')), 'INT64', ['1', 2], ['1', '2']],
  ['ARRAY<DATE>', A(T('DATE')), 'DATE', ['1970-01-01'], [0]],
  ['NULL', T('STRING'), 'STRING', null, null],
];

describe('Spanner → BigQuery types and values, every type', () => {
  it.each(EVERY_TYPE)('%s', (_label, type, bqType, input, expected) => {
    expect(bigQueryTypeOf(type)).toBe(bqType);
    const issues: ValueIssue[] = [];
    expect(toWriterValue('t.c', type, input as never, issues)).toEqual(expected);
    expect(issues).toEqual([]);
  });

  it('writes a NULL array as empty and drops NULL elements, reporting each', () => {
    const issues: ValueIssue[] = [];
    expect(toWriterValue('t.tags', A(T('STRING')), null, issues)).toEqual([]);
    expect(toWriterValue('t.tags', A(T('STRING')), ['a', null, 'b', null], issues)).toEqual(['a', 'b']);
    expect(issues).toEqual([
      { column: 't.tags', kind: 'null-array-element', detail: 'dropped NULL element at index 1' },
      { column: 't.tags', kind: 'null-array-element', detail: 'dropped NULL element at index 3' },
    ]);
  });

  it('refuses PG NUMERIC NaN and values beyond BIGNUMERIC with a permanent error naming the column', () => {
    const pg = T('NUMERIC', { typeAnnotation: 'PG_NUMERIC' });
    const refused = (v: JsonValue, type = pg) => {
      try {
        toWriterValue('t.n', type, v, []);
      } catch (e) {
        return e;
      }
      throw new Error(`accepted ${JSON.stringify(v)}`);
    };
    for (const v of ['NaN', `0.${'1'.repeat(39)}`, '1'.repeat(39), ['1', 'NaN']]) {
      const e = refused(v, Array.isArray(v) ? A(pg) : pg);
      expect(e).toBeInstanceOf(UnrepresentableError);
      expect(e).toMatchObject({ kind: 'permanent', reason: 'value', where: 't.n' });
    }
    expect((refused('NaN') as Error).message).toMatch(
      /^t\.n: PostgreSQL NUMERIC NaN has no BigQuery BIGNUMERIC/,
    );
    expect((refused(`9${'0'.repeat(80)}`) as Error).message).toMatch(
      /81 characters\) exceeds BigQuery BIGNUMERIC/,
    );
    // At the limits, and trailing zeros beyond the scale, it fits exactly.
    expect(toWriterValue('t.n', pg, `-${'9'.repeat(38)}.${'9'.repeat(38)}`, [])).toBe(
      `-${'9'.repeat(38)}.${'9'.repeat(38)}`,
    );
    expect(toWriterValue('t.n', pg, `1.5${'0'.repeat(50)}`, [])).toBe('1.5');
    expect(toWriterValue('t.n', T('NUMERIC'), `${'9'.repeat(29)}.${'9'.repeat(9)}`, [])).toBe(
      `${'9'.repeat(29)}.${'9'.repeat(9)}`,
    );
    expect(toWriterValue('t.n', T('NUMERIC'), '-0.000', [])).toBe('-0.000');
  });

  it.each([
    [T('BOOL'), 'true'],
    [T('INT64'), '1.5'],
    [T('INT64'), '9223372036854775808'],
    [T('INT64'), 2 ** 60],
    [T('FLOAT64'), 'abc'],
    [T('FLOAT64'), ''],
    [T('NUMERIC'), 'NaN'],
    [T('NUMERIC'), '1e5'],
    [T('STRING'), 5],
    [T('BYTES'), 'not base64!'],
    [T('DATE'), '2023-02-29'],
    [T('DATE'), 20240101],
    [T('TIMESTAMP'), 'yesterday'],
    [A(T('INT64')), '1'],
    [T('STRUCT'), {}],
  ])('rejects %j value %j naming the column', (type, value) => {
    expect(() => toWriterValue('Orders.c', type, value as never, [])).toThrow(/^Orders\.c: /);
  });

  it('takes INT64 and NUMERIC as JSON numbers up to 2^53, and refuses a larger one the client already rounded', () => {
    expect(toWriterValue('t.i', T('INT64'), 9007199254740991, [])).toBe('9007199254740991');
    expect(toWriterValue('t.i', T('INT64'), -42, [])).toBe('-42');
    expect(toWriterValue('t.n', T('NUMERIC'), 12.5, [])).toBe('12.5');
    for (const type of [T('INT64'), T('NUMERIC'), T('NUMERIC', { typeAnnotation: 'PG_NUMERIC' })])
      expect(() => toWriterValue('t.i', type, 2 ** 60, [])).toThrow(
        /t\.i: a (INT64|NUMERIC) value arrived as the JSON number 1152921504606847000, beyond 2\^53/,
      );
  });

  it('maps a 10 MiB BYTES value (14 MB of base64) and still refuses what is not base64', () => {
    const big = Buffer.alloc(10 * 1024 * 1024, 7).toString('base64');
    expect(toWriterValue('t.b', T('BYTES'), big, [])).toBe(big);
    for (const bad of ['abc', 'ab=c', 'a===', '****'])
      expect(() => toWriterValue('t.b', T('BYTES'), bad, [])).toThrow(/t\.b/);
  });

  it('rejects GoogleSQL NUMERIC beyond its scale (Spanner never sends one, BigQuery could not hold it)', () => {
    expect(() => toWriterValue('t.n', T('NUMERIC'), '1.0000000001', [])).toThrow(
      /t\.n: 1\.0000000001 exceeds BigQuery NUMERIC/,
    );
  });
});

describe('BigQuery fields and replica schema', () => {
  it('makes arrays REPEATED, NOT NULL columns REQUIRED, others NULLABLE', () => {
    expect(bigQueryFieldOf({ name: 'a', type: A(T('STRING')), nullable: false })).toEqual({
      name: 'a',
      type: 'STRING',
      mode: 'REPEATED',
    });
    expect(bigQueryFieldOf({ name: 'b', type: T('INT64'), nullable: false }).mode).toBe('REQUIRED');
    expect(bigQueryFieldOf({ name: 'c', type: T('JSON'), nullable: true }).mode).toBe('NULLABLE');
  });

  it('refuses reserved column names, unknown types, and tables BigQuery CDC cannot key', () => {
    expect(() => bigQueryFieldOf({ name: '_change_type', type: T('STRING'), nullable: true })).toThrow(
      /reserves/,
    );
    expect(() => bigQueryTypeOf(T('TOKENLIST'))).toThrow(/no BigQuery type for Spanner type TOKENLIST/);
    const col = (name: string) => ({ name, type: T('INT64'), nullable: false });
    expect(() => replicaTableSchema({ name: 't', columns: [col('a')], primaryKey: [] })).toThrow(
      /no primary key/,
    );
    const many = Array.from({ length: 17 }, (_, i) => `k${i}`);
    expect(() => replicaTableSchema({ name: 't', columns: many.map(col), primaryKey: many })).toThrow(
      /allows 16/,
    );
    expect(replicaTableSchema({ name: 't', columns: [col('a'), col('b')], primaryKey: ['a'] })).toEqual({
      fields: [
        { name: 'a', type: 'INT64', mode: 'REQUIRED' },
        // NOT NULL outside the key stays NULLABLE: a CDC DELETE row carries only the key.
        { name: 'b', type: 'INT64', mode: 'NULLABLE' },
      ],
      primaryKey: ['a'],
    });
  });
});

describe('Spanner type text', () => {
  it.each([
    ['STRING(MAX)', 'GOOGLE_STANDARD_SQL', 'STRING'],
    ['BYTES(1024)', 'GOOGLE_STANDARD_SQL', 'BYTES'],
    ['ARRAY<NUMERIC>', 'GOOGLE_STANDARD_SQL', 'ARRAY<NUMERIC>'],
    ['PROTO<`pkg.Msg`>', 'GOOGLE_STANDARD_SQL', 'PROTO(pkg.Msg)'],
    ['ENUM<pkg.E>', 'GOOGLE_STANDARD_SQL', 'ENUM(pkg.E)'],
    ['FLOAT32', 'GOOGLE_STANDARD_SQL', 'FLOAT32'],
    ['character varying(256)', 'POSTGRESQL', 'STRING'],
    ['timestamp with time zone', 'POSTGRESQL', 'TIMESTAMP'],
    ['spanner.commit_timestamp', 'POSTGRESQL', 'TIMESTAMP'],
    ['numeric[]', 'POSTGRESQL', 'ARRAY<NUMERIC(PG_NUMERIC)>'],
    ['jsonb', 'POSTGRESQL', 'JSON(PG_JSONB)'],
    ['double precision', 'POSTGRESQL', 'FLOAT64'],
    ['oid', 'POSTGRESQL', 'INT64(PG_OID)'],
  ] as const)('%s (%s)', (text, dialect, expected) => {
    expect(formatSpannerType(parseSpannerTypeName(text, dialect))).toBe(expected);
  });

  it.each([
    ['ARRAY<ARRAY<INT64>>', 'GOOGLE_STANDARD_SQL'],
    ['STRUCT<a INT64>', 'GOOGLE_STANDARD_SQL'],
    ['bigint[][]', 'POSTGRESQL'],
    ['money', 'POSTGRESQL'],
  ] as const)('rejects %s', (text, dialect) => {
    expect(() => parseSpannerTypeName(text, dialect)).toThrow(/unsupported/);
  });

  it('reads type JSON in snake_case and camelCase', () => {
    expect(
      parseTypeJson({ code: 'ARRAY', arrayElementType: { code: 'JSON', typeAnnotation: 'PG_JSONB' } }, 'x'),
    ).toEqual(A(T('JSON', { typeAnnotation: 'PG_JSONB' })));
    expect(
      parseTypeJson(
        { code: 'PROTO', proto_type_fqn: 'a.B', type_annotation: 'TYPE_ANNOTATION_CODE_UNSPECIFIED' },
        'x',
      ),
    ).toEqual(T('PROTO', { protoTypeFqn: 'a.B' }));
    expect(() => parseTypeJson({ code: 'ARRAY', array_element_type: { code: 'ARRAY' } }, 'x')).toThrow();
    expect(() => parseTypeJson('STRING', 'col.type')).toThrow(/col\.type: expected a type object/);
  });
});

describe('canonical text is passed through, anything else is normalised as before', () => {
  it.each([
    ['INT64', T('INT64'), '0', '0'],
    ['INT64', T('INT64'), '-0', '0'],
    ['INT64', T('INT64'), '007', '7'],
    ['INT64', T('INT64'), '-9223372036854775808', '-9223372036854775808'],
    ['INT64', T('INT64'), '9223372036854775807', '9223372036854775807'],
    ['INT64', T('INT64'), '999999999999999999', '999999999999999999'],
    ['NUMERIC', T('NUMERIC'), '-0', '-0'],
    ['NUMERIC', T('NUMERIC'), '0.000000001', '0.000000001'],
    [
      'NUMERIC',
      T('NUMERIC'),
      '99999999999999999999999999999.999999999',
      '99999999999999999999999999999.999999999',
    ],
    ['NUMERIC', T('NUMERIC'), '+1.50', '1.50'],
    ['NUMERIC', T('NUMERIC'), '007.5', '7.5'],
    ['NUMERIC', T('NUMERIC'), '1.5000000000', '1.5'],
  ])('%s %s → %s', (_name, type, text, want) => {
    expect(toWriterValue('c', type, text, [])).toBe(want);
  });

  it.each([
    ['INT64', T('INT64'), '9223372036854775808'],
    ['INT64', T('INT64'), '-9223372036854775809'],
    ['INT64', T('INT64'), '1.0'],
    ['NUMERIC', T('NUMERIC'), '100000000000000000000000000000'],
  ])('%s %s is refused', (_name, type, text) => {
    expect(() => toWriterValue('c', type, text, [])).toThrow(/c/);
  });
});
