/**
 * TIMESTAMP key columns keep distinct Spanner keys distinct in the replica (ADR-1402): the exact companion
 * column in the schema and primary key, in stream rows, read rows and backfill rows, and in history ids.
 */
import { PreciseDate } from '@google-cloud/precise-date';
import { snapshotHistoryRow, snapshotUpsert } from '../../../shared/domain/backfill/rows';
import { replicaTableSchema } from '../../../shared/domain/bigquery-schema';
import type { DataChangeRecord, Mod } from '../../../shared/domain/change-record';
import { clientRowToWriterRow } from '../../../shared/domain/client-row';
import { addExactKeys, exactKeyColumn } from '../../../shared/domain/exact-keys';
import { buildReplicaChanges } from '../../../shared/domain/replica-rows';
import { parseTimestamp } from '../../../shared/domain/timestamp';

const ts = (code: string) => ({ code });
const ONE = '2024-01-01T00:00:00.000000001Z';
const TWO = '2024-01-01T00:00:00.000000002Z';

test('the replica schema puts an exact companion after each TIMESTAMP key column and in the key', () => {
  const schema = replicaTableSchema({
    name: 'E',
    columns: [
      { name: 'Dev', type: ts('INT64'), nullable: false },
      { name: 'At', type: ts('TIMESTAMP'), nullable: false },
      { name: 'Seen', type: ts('TIMESTAMP'), nullable: true },
    ],
    primaryKey: ['Dev', 'At'],
  });
  expect(schema.fields).toEqual([
    { name: 'Dev', type: 'INT64', mode: 'REQUIRED' },
    { name: 'At', type: 'TIMESTAMP', mode: 'REQUIRED' },
    { name: 'At__ns', type: 'STRING', mode: 'REQUIRED' },
    { name: 'Seen', type: 'TIMESTAMP', mode: 'NULLABLE' },
  ]);
  expect(schema.primaryKey).toEqual(['Dev', 'At', 'At__ns']);
});

test('a column already named like the companion, or more than 16 key columns with companions, is refused', () => {
  expect(() =>
    replicaTableSchema({
      name: 'E',
      columns: [
        { name: 'At', type: ts('TIMESTAMP'), nullable: false },
        { name: 'at__NS', type: ts('STRING'), nullable: true },
      ],
      primaryKey: ['At'],
    }),
  ).toThrow(/has a column At__ns/);
  const columns = Array.from({ length: 9 }, (_, i) => ({
    name: `T${i}`,
    type: ts('TIMESTAMP'),
    nullable: false,
  }));
  expect(() => replicaTableSchema({ name: 'E', columns, primaryKey: columns.map((c) => c.name) })).toThrow(
    /needs 18 replica key columns.*16/,
  );
});

const record = (modType: 'INSERT' | 'DELETE', keys: string[], at: string): DataChangeRecord => ({
  kind: 'data-change',
  commitTimestamp: parseTimestamp(at),
  recordSequence: '00000000',
  serverTransactionId: `t-${at}`,
  isLastRecordInTransactionInPartition: true,
  tableName: 'E',
  columnTypes: [
    { name: 'At', type: ts('TIMESTAMP'), isPrimaryKey: true, ordinalPosition: 1 },
    { name: 'V', type: ts('STRING'), isPrimaryKey: false, ordinalPosition: 2 },
  ],
  mods: keys.map(
    (k): Mod => ({
      keys: { At: k },
      newValues: modType === 'INSERT' ? { V: k } : {},
      oldValues: {},
    }),
  ),
  modType,
  valueCaptureType: 'NEW_ROW',
  numberOfRecordsInTransaction: 1,
  numberOfPartitionsInTransaction: 1,
  transactionTag: '',
  isSystemTransaction: false,
});

test('stream upserts and deletes of keys a nanosecond apart are two rows, each with its exact key', () => {
  const { changes } = buildReplicaChanges([
    record('INSERT', [ONE, TWO], '2025-01-01T00:00:00Z'),
    record('DELETE', ['2024-01-01T01:00:00.000000001+01:00'], '2025-01-01T00:00:01Z'),
  ]);
  expect(changes.map((c) => [c.kind, 'row' in c ? c.row : undefined])).toEqual([
    ['upsert', { At: '1704067200000000', At__ns: ONE, V: ONE }],
    ['upsert', { At: '1704067200000000', At__ns: TWO, V: TWO }],
    // Any spelling of the same instant gives the same exact key (nine digits).
    ['delete', { At: '1704067200000000', At__ns: ONE }],
  ]);
});

test('rows read from the client carry the exact companion of a TIMESTAMP key, not of other columns', () => {
  const columns = [
    { name: 'At', type: ts('TIMESTAMP'), nullable: false, ordinalPosition: 1 },
    { name: 'Seen', type: ts('TIMESTAMP'), nullable: true, ordinalPosition: 2 },
  ];
  const row = [
    { name: 'At', value: new PreciseDate(TWO) },
    { name: 'Seen', value: new PreciseDate(ONE) },
  ];
  expect(clientRowToWriterRow(row, columns, [], ['At'])).toEqual({
    At: '1704067200000000',
    At__ns: TWO,
    Seen: '1704067200000000',
  });
  expect(addExactKeys({}, { At: ONE, Other: 'x' }, [{ name: 'At', type: ts('TIMESTAMP') }])).toEqual({
    [exactKeyColumn('At')]: ONE,
  });
});

test('backfill rows of keys a nanosecond apart keep distinct replica keys and history ids', () => {
  const t = parseTimestamp('2025-01-01T00:00:00Z');
  const rows = [ONE, TWO].map((k) => ({ At: '1704067200000000', At__ns: k, V: 'v' }));
  const upserts = rows.map((r) => snapshotUpsert('E', ['At'], r, t));
  expect(upserts.map((u) => u.key)).toEqual([{ At: ONE }, { At: TWO }]);
  const history = rows.map((r) => snapshotHistoryRow('E', ['At'], r, t, 'job'));
  expect(new Set(history.map((h) => h.change_id)).size).toBe(2);
  expect(history.map((h) => [h.keys, h.new_values])).toEqual([
    [JSON.stringify({ At: ONE }), '{"V":"v"}'],
    [JSON.stringify({ At: TWO }), '{"V":"v"}'],
  ]);
});
