import fc from 'fast-check';
import type { ChangeRecord, DataChangeRecord } from '../../../shared/domain/change-record';
import {
  DecodeError,
  decodeGoogleSqlRow,
  decodePostgresRecord,
  decodePostgresRow,
} from '../../../shared/domain/change-record-decode';
import { parseTimestamp } from '../../../shared/domain/timestamp';
import docs from '../../fixtures/change-records/docs-examples.json';
import emu from '../../fixtures/change-records/emulator-examples.json';
import { googleSqlClientRows, postgresClientRows, type RowOptions } from './support/client-rows';

const CLIENT_OPTIONS: [string, RowOptions][] = [
  ['default rows', {}],
  ['json: true', { json: true }],
  ['json with wrapNumbers', { json: true, jsonOptions: { wrapNumbers: true } }],
  ['json with wrapStructs', { json: true, jsonOptions: { wrapStructs: true } }],
];

async function viaGoogleSql(record: object, options: RowOptions): Promise<ChangeRecord[]> {
  const rows = await googleSqlClientRows([record as Record<string, unknown>], options);
  return rows.flatMap(decodeGoogleSqlRow);
}

const docsDataChange: DataChangeRecord = {
  kind: 'data-change',
  commitTimestamp: parseTimestamp('2022-09-27T12:30:00.123456Z'),
  recordSequence: '00000000',
  serverTransactionId: '6329047911',
  isLastRecordInTransactionInPartition: true,
  tableName: 'AccountBalance',
  columnTypes: [
    { name: 'AccountId', type: { code: 'STRING' }, isPrimaryKey: true, ordinalPosition: 1 },
    { name: 'LastUpdate', type: { code: 'TIMESTAMP' }, isPrimaryKey: false, ordinalPosition: 2 },
    { name: 'Balance', type: { code: 'INT64' }, isPrimaryKey: false, ordinalPosition: 3 },
  ],
  mods: [
    {
      keys: { AccountId: 'Id1' },
      newValues: { LastUpdate: '2022-09-27T12:30:00.123456Z', Balance: 1000 },
      oldValues: { LastUpdate: '2022-09-26T11:28:00.189413Z', Balance: 1500 },
    },
  ],
  modType: 'UPDATE',
  valueCaptureType: 'OLD_AND_NEW_VALUES',
  numberOfRecordsInTransaction: 2,
  numberOfPartitionsInTransaction: 2,
  transactionTag: 'app=banking,env=prod,action=update',
  isSystemTransaction: false,
};

describe.each(CLIENT_OPTIONS)('GoogleSQL rows from the client (%s)', (_label, options) => {
  it('decodes the documented data-change record', async () => {
    expect(await viaGoogleSql(docs.dataChange, options)).toEqual([docsDataChange]);
  });

  it('decodes a heartbeat with microsecond precision', async () => {
    expect(await viaGoogleSql(docs.heartbeat, options)).toEqual([
      { kind: 'heartbeat', timestamp: parseTimestamp('2022-09-27T12:35:00.312486Z') },
    ]);
  });

  it('decodes a merge child-partitions record with both parents', async () => {
    expect(await viaGoogleSql(docs.childPartitionsMerge, options)).toEqual([
      {
        kind: 'child-partitions',
        startTimestamp: parseTimestamp('2022-09-27T12:40:00.562986Z'),
        recordSequence: '00000001',
        childPartitions: [
          { token: 'child_token_4', parentPartitionTokens: ['child_token_2', 'child_token_3'] },
        ],
      },
    ]);
  });

  it('reads the initial query NULL parent tokens as no parents', async () => {
    const [record] = await viaGoogleSql(docs.initialChildPartitions, options);
    expect(record).toMatchObject({
      recordSequence: '1000012389',
      childPartitions: [
        { token: 'child_token_1', parentPartitionTokens: [] },
        { token: 'child_token_2', parentPartitionTokens: [] },
      ],
    });
  });

  it('keeps INT64 mod values sent as strings exactly, beyond 2^53, and nanosecond commit times', async () => {
    const [record] = await viaGoogleSql(emu.insertGoogleSql, options);
    expect(record).toMatchObject({
      commitTimestamp: parseTimestamp('2024-03-01T10:00:00.000001234Z'),
      numberOfRecordsInTransaction: 4,
      modType: 'INSERT',
      valueCaptureType: 'NEW_ROW',
      transactionTag: '',
    });
    const dc = record as DataChangeRecord;
    expect(dc.mods[1]!.keys).toEqual({ OrderId: '9007199254740993', Region: 'us' });
    expect(dc.mods[0]!.newValues).toEqual({ Amount: '12.50', Tags: ['a', null] });
    expect(dc.columnTypes[3]!.type).toEqual({ code: 'ARRAY', arrayElementType: { code: 'STRING' } });
  });

  it('decodes several rows of one query in order', async () => {
    const rows = await googleSqlClientRows(
      [docs.heartbeat, docs.dataChange, docs.childPartitionsMerge],
      options,
    );
    expect(rows.flatMap(decodeGoogleSqlRow).map((r) => r.kind)).toEqual([
      'heartbeat',
      'data-change',
      'child-partitions',
    ]);
  });
});

describe('PostgreSQL JSONB records', () => {
  it.each([
    ['default rows', {}],
    ['json: true', { json: true }],
  ] as [string, RowOptions][])('decodes client rows (%s) by column index', async (_label, options) => {
    const rows = await postgresClientRows([emu.deletePostgres, emu.heartbeatPostgres], options);
    const [del, hb] = rows.map(decodePostgresRow);
    expect(del).toMatchObject({
      kind: 'data-change',
      commitTimestamp: parseTimestamp('2024-03-01T10:00:00.123456Z'),
      modType: 'DELETE',
      tableName: 'orders',
      mods: [{ keys: { order_id: 7 }, newValues: {}, oldValues: { amount: 'NaN', doc: '{"a": 1}' } }],
    });
    expect((del as DataChangeRecord).columnTypes[1]!.type).toEqual({
      code: 'NUMERIC',
      typeAnnotation: 'PG_NUMERIC',
    });
    expect(hb).toEqual({ kind: 'heartbeat', timestamp: parseTimestamp('2024-03-01T10:00:05.500000000Z') });
  });

  it('accepts the parsed object and JSON text', () => {
    const expected = decodePostgresRecord(docs.childPartitionsMerge);
    expect(decodePostgresRecord(JSON.stringify(docs.childPartitionsMerge))).toEqual(expected);
    expect(decodePostgresRecord({ value: docs.childPartitionsMerge })).toEqual(expected);
    expect(decodePostgresRecord(docs.dataChange)).toEqual(docsDataChange);
    expect(decodePostgresRecord(emu.initialChildPartitions)).toMatchObject({
      childPartitions: [{ token: 'dG9rZW4x', parentPartitionTokens: [] }],
    });
  });

  it('rejects an object with no or several record keys, naming the keys seen', () => {
    expect(() => decodePostgresRecord({ partition_start_record: {} })).toThrow(
      /unknown change record shape.*saw keys \[partition_start_record\]/,
    );
    expect(() => decodePostgresRecord({ ...docs.heartbeat, ...docs.childPartitionsMerge })).toThrow(
      DecodeError,
    );
    expect(() => decodePostgresRecord(42)).toThrow(/expected a JSONB object, saw number 42/);
    expect(() => decodePostgresRecord('not json')).toThrow(/expected JSON text/);
    expect(() => decodePostgresRow([])).toThrow(/expected a result row/);
  });
});

describe('decoding errors name the field and what was seen', () => {
  const dc = docs.dataChange.data_change_record;
  const bad = (patch: Record<string, unknown>) => ({ data_change_record: { ...dc, ...patch } });

  it.each([
    [
      { mod_type: 'MERGE' },
      /data_change_record\.mod_type: expected one of INSERT, UPDATE, DELETE, saw string "MERGE"/,
    ],
    [{ value_capture_type: 'ALL' }, /value_capture_type: expected one of/],
    [{ record_sequence: 'x1' }, /record_sequence: expected a digit string/],
    [{ commit_timestamp: '2022-13-01T00:00:00Z' }, /commit_timestamp: invalid timestamp/],
    [{ commit_timestamp: 5 }, /commit_timestamp: expected a timestamp, saw number 5/],
    [{ number_of_records_in_transaction: 'many' }, /number_of_records_in_transaction: expected an INT64/],
    [{ number_of_records_in_transaction: '-1' }, /count -1 out of range/],
    [{ table_name: null }, /table_name: expected a string, saw null/],
    [{ is_system_transaction: 'no' }, /is_system_transaction: expected a boolean/],
    [{ mods: {} }, /mods: expected an array/],
    [{ mods: [{ keys: [1], new_values: {}, old_values: {} }] }, /mods\[0\]\.keys: expected a JSON object/],
    [{ mods: [{ keys: '{', new_values: {}, old_values: {} }] }, /mods\[0\]\.keys: expected JSON text/],
    [{ mods: [7] }, /mods\[0\]: expected a struct, saw number 7/],
    [{ mods: [[1, 2]] }, /mods\[0\]: expected a struct, saw array \[1,2\]/],
    [
      { column_types: [{ ...dc.column_types[0], type: { code: 'INT' } }] },
      /column_types\[0\]\.type \(column AccountBalance\.AccountId\): unknown Spanner type code, saw string "INT"/,
    ],
  ])('%j', (patch, message) => {
    expect(() => decodePostgresRecord(bad(patch))).toThrow(message);
  });

  it('rejects a GoogleSQL ChangeRecord element with no record, naming its fields', () => {
    const row = {
      ChangeRecord: [{ data_change_record: [], heartbeat_record: [], child_partitions_record: null }],
    };
    expect(() => decodeGoogleSqlRow(row)).toThrow(
      /ChangeRecord\[0\]: unknown change record shape: no record in fields \[data_change_record, heartbeat_record, child_partitions_record\]/,
    );
    expect(() => decodeGoogleSqlRow({ ChangeRecord: 'x' })).toThrow(/ChangeRecord: expected an array/);
    expect(() => decodeGoogleSqlRow(null)).toThrow(/row: expected a result row/);
    expect(() => decodeGoogleSqlRow({})).toThrow(/row: expected a result row/);
  });

  it('never fails with anything but a DecodeError, whatever it is given', () => {
    const check = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(DecodeError);
      }
    };
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withDate: true, withMap: true }), (value) => {
        check(() => decodeGoogleSqlRow(value));
        check(() => decodeGoogleSqlRow({ ChangeRecord: [value] }));
        check(() => decodeGoogleSqlRow({ ChangeRecord: [{ heartbeat_record: [value] }] }));
        check(() => decodePostgresRecord(value));
        check(() => decodePostgresRecord({ data_change_record: value }));
        check(() => decodePostgresRecord({ child_partitions_record: value }));
      }),
      { numRuns: 300 },
    );
  });

  it('survives random mutations of a valid record', () => {
    const base = docs.dataChange.data_change_record as Record<string, unknown>;
    const keys = Object.keys(base);
    fc.assert(
      fc.property(fc.constantFrom(...keys), fc.anything(), (key, value) => {
        try {
          decodePostgresRecord({ data_change_record: { ...base, [key]: value } });
        } catch (e) {
          expect(e).toBeInstanceOf(DecodeError);
        }
      }),
      { numRuns: 300 },
    );
  });
});
