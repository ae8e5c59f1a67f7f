import {
  capturesFullRow,
  compareRecordSequence,
  recordTimestamp,
  VALUE_CAPTURE_TYPES,
} from '../../../shared/domain/change-record';
import { decodePostgresRecord } from '../../../shared/domain/change-record-decode';
import { parseTimestamp } from '../../../shared/domain/timestamp';
import docs from '../../fixtures/change-records/docs-examples.json';

describe('change record model', () => {
  it('places each record kind at its timestamp', () => {
    expect(recordTimestamp(decodePostgresRecord(docs.dataChange))).toBe(
      parseTimestamp('2022-09-27T12:30:00.123456Z'),
    );
    expect(recordTimestamp(decodePostgresRecord(docs.heartbeat))).toBe(
      parseTimestamp('2022-09-27T12:35:00.312486Z'),
    );
    expect(recordTimestamp(decodePostgresRecord(docs.childPartitionsMerge))).toBe(
      parseTimestamp('2022-09-27T12:40:00.562986Z'),
    );
  });

  it('compares record sequences numerically, not as text', () => {
    expect(compareRecordSequence('00000009', '10')).toBe(-1);
    expect(compareRecordSequence('1000012389', '00000001')).toBe(1);
    expect(compareRecordSequence('007', '7')).toBe(0);
  });

  it('knows which capture types carry the full row', () => {
    expect(VALUE_CAPTURE_TYPES.filter(capturesFullRow)).toEqual(['NEW_ROW', 'NEW_ROW_AND_OLD_VALUES']);
  });
});
