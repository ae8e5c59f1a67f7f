/**
 * The client-value converter for types the emulator cannot store (UUID, INTERVAL, PROTO, ENUM),
 * using the Spanner client's own value classes, and its errors on values of the wrong shape.
 */
import { Interval, Spanner } from '@google-cloud/spanner';
import { clientRowToWriterRow, clientValueToModJson } from '../../../shared/domain/client-row';
import { DecodeError } from '../../../shared/domain/client-values';
import type { ValueIssue } from '../../../shared/domain/value-mapping';

describe('clientValueToModJson', () => {
  it('maps values of types the emulator lacks through the client classes', () => {
    expect(clientValueToModJson(new Interval(14, 3, BigInt(5_500_000_000)), { code: 'INTERVAL' }, 'c')).toBe(
      new Interval(14, 3, BigInt(5_500_000_000)).toISO8601(),
    );
    const uuid = '0f8fad5b-d9cb-469f-a165-70867728950e';
    expect(clientValueToModJson(uuid, { code: 'UUID' }, 'c')).toBe(uuid);
    const proto = Spanner.protoMessage({ value: Buffer.from([8, 1]), fullName: 'pkg.Msg' });
    expect(clientValueToModJson(proto, { code: 'PROTO', protoTypeFqn: 'pkg.Msg' }, 'c')).toBe('CAE=');
    const en = Spanner.protoEnum({ value: 3, fullName: 'pkg.Kind' });
    expect(clientValueToModJson(en, { code: 'ENUM', protoTypeFqn: 'pkg.Kind' }, 'c')).toBe('3');
    expect(clientValueToModJson(Spanner.float(Number.NaN), { code: 'FLOAT64' }, 'c')).toBe('NaN');
    expect(clientValueToModJson(Spanner.int('-9223372036854775808'), { code: 'INT64' }, 'c')).toBe(
      '-9223372036854775808',
    );
  });

  it('rejects a value of the wrong shape, naming the column', () => {
    expect(() => clientValueToModJson('x', { code: 'INT64' }, 'Col')).toThrow(DecodeError);
    expect(() => clientValueToModJson(3, { code: 'BOOL' }, 'Col')).toThrow(/Col/);
    expect(() =>
      clientValueToModJson(1, { code: 'ARRAY', arrayElementType: { code: 'INT64' } }, 'A'),
    ).toThrow(/ARRAY/);
  });

  it('converts a row of either shape and reports what BigQuery cannot hold', () => {
    const issues: ValueIssue[] = [];
    const columns = [
      { name: 'Id', type: { code: 'INT64' }, nullable: false, ordinalPosition: 1 },
      {
        name: 'N',
        type: { code: 'NUMERIC', typeAnnotation: 'PG_NUMERIC' },
        nullable: true,
        ordinalPosition: 2,
      },
    ];
    const row = [
      { name: 'Id', value: Spanner.int('7') },
      { name: 'N', value: Spanner.pgNumeric('NaN') },
    ];
    expect(() => clientRowToWriterRow(row, columns, issues)).toThrow(/N: PostgreSQL NUMERIC NaN/);
    expect(() => clientRowToWriterRow({ Id: 1 }, columns, [])).toThrow(/missing/);
  });
});
