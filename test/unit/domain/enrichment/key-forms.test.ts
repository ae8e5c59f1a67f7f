/**
 * Key identity: one canonical text per value whatever spelling a mod, a query result or a read carries, so a
 * requested key finds the row Spanner returns for it; distinct values stay distinct to the last digit.
 */
import type { SpannerType } from '../../../../shared/domain/change-record';
import { keyIdentity, keyValueIdentity } from '../../../../shared/domain/enrichment/key-forms';

const same = (type: SpannerType, a: unknown, b: unknown) =>
  expect(keyValueIdentity(type, a as never)).toBe(keyValueIdentity(type, b as never));
const differ = (type: SpannerType, a: unknown, b: unknown) =>
  expect(keyValueIdentity(type, a as never)).not.toBe(keyValueIdentity(type, b as never));

describe('key identity', () => {
  it('spells one TIMESTAMP one way, to the nanosecond, before 1970 too', () => {
    const ts = { code: 'TIMESTAMP' };
    same(ts, '2024-02-29T12:00:00.1Z', '2024-02-29T12:00:00.100000000Z');
    same(ts, '1970-01-01T00:00:00Z', '1970-01-01T00:00:00.000000000Z');
    differ(ts, '2024-02-29T12:00:00.123456789Z', '2024-02-29T12:00:00.123456788Z');
    differ(ts, '1969-12-31T23:59:59.999999999Z', '1970-01-01T00:00:00Z');
  });

  it('spells NUMERIC (GoogleSQL and PostgreSQL) by value, not scale', () => {
    for (const type of [{ code: 'NUMERIC' }, { code: 'NUMERIC', typeAnnotation: 'PG_NUMERIC' }]) {
      same(type, '1.50', '1.5');
      same(type, '-0.0', '0');
      same(type, '007', '7');
      same(type, '0.5', '.5');
      differ(type, '99999999999999999999999999999.999999999', '99999999999999999999999999999.999999998');
      expect(keyValueIdentity(type, 'NaN')).toBe('NaN');
    }
  });

  it('spells FLOAT by value (a number or its text), -0 as 0, NaN and the infinities apart', () => {
    const f = { code: 'FLOAT64' };
    same(f, 2, '2');
    same(f, -0, 0);
    same(f, 'Infinity', Number.POSITIVE_INFINITY);
    differ(f, 'Infinity', '-Infinity');
    differ(f, 'NaN', 'Infinity');
    differ(f, 1.7976931348623157e308, 'Infinity');
  });

  it('spells INT64 over its whole range, BYTES by their bytes, UUID in any case', () => {
    same({ code: 'INT64' }, '+9223372036854775807', '9223372036854775807');
    differ({ code: 'INT64' }, '9007199254740993', '9007199254740992');
    same({ code: 'BYTES' }, 'AAEC/w', 'AAEC/w==');
    differ({ code: 'BYTES' }, '', 'AA==');
    same({ code: 'UUID' }, 'F47AC10B-58CC-4372-A567-0E02B2C3D479', 'f47ac10b-58cc-4372-a567-0e02b2c3d479');
  });

  it('keeps a composite key in declared order, NULL apart from the text "null"', () => {
    const types = [{ code: 'STRING' }, { code: 'INT64' }];
    expect(keyIdentity(types, ['eu', '1'])).toBe(keyIdentity(types, ['eu', '01']));
    expect(keyIdentity(types, ['eu', '1'])).not.toBe(keyIdentity(types, ['1', 'eu']));
    expect(keyIdentity([{ code: 'STRING' }], [null])).not.toBe(keyIdentity([{ code: 'STRING' }], ['null']));
  });
});
