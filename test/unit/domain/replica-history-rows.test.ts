import { compareChangeSequenceNumbers } from '../../../shared/domain/cdc-sequence';
import type { DataChangeRecord, Mod, ValueCaptureType } from '../../../shared/domain/change-record';
import { decodePostgresRecord } from '../../../shared/domain/change-record-decode';
import {
  canonicalOrder,
  changeId,
  HISTORY_TABLE_FIELDS,
  historyRows,
  historyRowsByDestination,
} from '../../../shared/domain/history-rows';
import {
  buildReplicaChanges,
  type ReplicaChange,
  replicaWriterRow,
} from '../../../shared/domain/replica-rows';
import { parseTimestamp } from '../../../shared/domain/timestamp';
import docs from '../../fixtures/change-records/docs-examples.json';
import emu from '../../fixtures/change-records/emulator-examples.json';

const insert = decodePostgresRecord(emu.insertGoogleSql) as DataChangeRecord;
const docsUpdate = decodePostgresRecord(docs.dataChange) as DataChangeRecord;
const T0 = parseTimestamp('2024-05-01T00:00:00.000000500Z');

const columnTypes = [
  { name: 'Id', type: { code: 'INT64' }, isPrimaryKey: true, ordinalPosition: 1 },
  { name: 'A', type: { code: 'STRING' }, isPrimaryKey: false, ordinalPosition: 2 },
  { name: 'B', type: { code: 'STRING' }, isPrimaryKey: false, ordinalPosition: 3 },
];

function record(
  txn: string,
  seq: string,
  capture: ValueCaptureType,
  mods: Mod[],
  over: Partial<DataChangeRecord> = {},
) {
  return {
    ...insert,
    tableName: 'T',
    commitTimestamp: T0,
    serverTransactionId: txn,
    recordSequence: seq,
    columnTypes,
    mods,
    modType: 'UPDATE',
    valueCaptureType: capture,
    ...over,
  } as DataChangeRecord;
}

const only = (changes: ReplicaChange[]) => {
  expect(changes).toHaveLength(1);
  return changes[0]!;
};

describe('replica changes', () => {
  it('upserts the full row for NEW_ROW, mapping values and reporting dropped NULL array elements', () => {
    const { changes, issues } = buildReplicaChanges([insert]);
    expect(changes.map((c) => c.kind)).toEqual(['upsert', 'upsert']);
    expect(replicaWriterRow(changes[0] as never)).toEqual({
      OrderId: '1',
      Region: 'eu',
      Amount: '12.50',
      Tags: ['a'],
      _CHANGE_TYPE: 'UPSERT',
      _CHANGE_SEQUENCE_NUMBER: `${(insert.commitTimestamp as bigint).toString(16).toUpperCase().padStart(16, '0')}/${'3'.padStart(16, '0')}/${'0'.padStart(16, '0')}`,
    });
    expect(changes[1]!.key).toEqual({ OrderId: '9007199254740993', Region: 'us' });
    expect((changes[1] as { row: object }).row).toEqual({
      OrderId: '9007199254740993',
      Region: 'us',
      Amount: null,
      Tags: [],
    });
    expect(issues).toEqual([
      { column: 'Orders.Tags', kind: 'null-array-element', detail: 'dropped NULL element at index 1' },
    ]);
    expect(compareChangeSequenceNumbers(changes[0]!.sequence, changes[1]!.sequence)).toBe(-1);
  });

  it('deletes by key with only the key columns', () => {
    const del = decodePostgresRecord(emu.deletePostgres) as DataChangeRecord;
    const change = only(buildReplicaChanges([del]).changes);
    expect(change.kind).toBe('delete');
    expect(replicaWriterRow(change as never)).toMatchObject({ order_id: '7', _CHANGE_TYPE: 'DELETE' });
  });

  it.each(['OLD_AND_NEW_VALUES', 'NEW_VALUES'] as const)(
    'asks for a read at the commit timestamp under %s',
    (capture) => {
      const change = only(buildReplicaChanges([{ ...docsUpdate, valueCaptureType: capture }]).changes);
      expect(change).toMatchObject({
        kind: 'read-at-commit',
        reason: 'capture-type',
        table: 'AccountBalance',
        key: { AccountId: 'Id1' },
        commitTimestamp: docsUpdate.commitTimestamp,
      });
    },
  );

  it('keeps the last mod of one transaction on a key (highest record sequence, compared numerically)', () => {
    const first = record('t1', '9', 'NEW_ROW', [
      { keys: { Id: '1' }, newValues: { A: 'x', B: 'y' }, oldValues: {} },
    ]);
    const second = record('t1', '10', 'NEW_ROW', [{ keys: { Id: '1' }, newValues: {}, oldValues: {} }], {
      modType: 'DELETE',
    });
    const change = only(buildReplicaChanges([second, first]).changes);
    expect(change.kind).toBe('delete');
    expect(change.sequence.split('/')[1]).toBe('A'.padStart(16, '0'));
  });

  it('merges two transactions at one timestamp on disjoint columns (NEW_ROW_AND_OLD_VALUES) in any order', () => {
    const t1 = record('t1', '0', 'NEW_ROW_AND_OLD_VALUES', [
      { keys: { Id: '1' }, newValues: { A: 'a1', B: 'b0' }, oldValues: { A: 'a0' } },
    ]);
    const t2 = record('t2', '0', 'NEW_ROW_AND_OLD_VALUES', [
      { keys: { Id: '1' }, newValues: { A: 'a0', B: 'b1' }, oldValues: { B: 'b0' } },
    ]);
    const a = only(buildReplicaChanges([t1, t2]).changes);
    const b = only(buildReplicaChanges([t2, t1]).changes);
    expect(a).toMatchObject({ kind: 'upsert', row: { Id: '1', A: 'a1', B: 'b1' } });
    expect(b).toEqual(a);
  });

  it('reads at the commit timestamp when concurrent NEW_ROW images cannot tell which columns changed', () => {
    const t1 = record('t1', '0', 'NEW_ROW', [
      { keys: { Id: '1' }, newValues: { A: 'a1', B: 'b0' }, oldValues: {} },
    ]);
    const t2 = record('t2', '5', 'NEW_ROW', [
      { keys: { Id: '1' }, newValues: { A: 'a0', B: 'b1' }, oldValues: {} },
    ]);
    const other = record('t3', '0', 'NEW_ROW', [
      { keys: { Id: '2' }, newValues: { A: 'z', B: 'z' }, oldValues: {} },
    ]);
    const { changes } = buildReplicaChanges([t1, t2, other]);
    expect(changes.map((c) => [c.kind, c.key])).toEqual([
      ['read-at-commit', { Id: '1' }],
      ['upsert', { Id: '2' }],
    ]);
    expect(changes[0]).toMatchObject({ reason: 'concurrent-transactions' });
  });

  it('orders changes by commit timestamp and keeps keys of different timestamps apart', () => {
    const later = record(
      't9',
      '0',
      'NEW_ROW',
      [{ keys: { Id: '1' }, newValues: { A: 'n', B: 'n' }, oldValues: {} }],
      {
        commitTimestamp: parseTimestamp('2024-05-01T00:00:01Z'),
      },
    );
    const earlier = record('t8', '7', 'NEW_ROW', [
      { keys: { Id: '1' }, newValues: { A: 'o', B: 'o' }, oldValues: {} },
    ]);
    const { changes } = buildReplicaChanges([later, earlier]);
    expect(changes.map((c) => (c as unknown as { row: { A: string } }).row.A)).toEqual(['o', 'n']);
    expect(compareChangeSequenceNumbers(changes[0]!.sequence, changes[1]!.sequence)).toBe(-1);
  });

  it('rejects a mod naming a column missing from column_types', () => {
    const bad = record('t1', '0', 'NEW_ROW', [{ keys: { Id: '1' }, newValues: { Z: 1 }, oldValues: {} }]);
    expect(() => buildReplicaChanges([bad])).toThrow(/T\.Z: column is not in the record column_types/);
  });
});

describe('history rows', () => {
  it('writes one row per mod with identity, exact JSON and nanosecond commit time', () => {
    const rows = historyRows(insert);
    expect(rows).toHaveLength(2);
    expect(rows[1]).toEqual({
      commit_timestamp: '1709287200000001',
      commit_timestamp_ns: '2024-03-01T10:00:00.000001234Z',
      server_transaction_id: '42',
      record_sequence: '3',
      mod_index: '1',
      change_id: '42/3/1',
      table_name: 'Orders',
      mod_type: 'INSERT',
      keys: '{"OrderId":"9007199254740993","Region":"us"}',
      new_values: '{"Amount":null,"Tags":null}',
      old_values: '{}',
      transaction_tag: '',
      number_of_records_in_transaction: '4',
      number_of_partitions_in_transaction: '1',
      value_capture_type: 'NEW_ROW',
      is_system_transaction: false,
      is_last_record_in_transaction_in_partition: false,
    });
    expect(Object.keys(rows[0]!).sort()).toEqual(HISTORY_TABLE_FIELDS.map((f) => f.name).sort());
  });

  it('keeps the documented record as delivered', () => {
    const [row] = historyRows(docsUpdate);
    expect(JSON.parse(row!.old_values)).toEqual({ LastUpdate: '2022-09-26T11:28:00.189413Z', Balance: 1500 });
    expect(row!.transaction_tag).toBe('app=banking,env=prod,action=update');
  });

  it('gives the same identity whatever the record sequence width', () => {
    expect(changeId('tx', '00000007', 2)).toBe(changeId('tx', '7', 2));
  });

  it('orders records canonically (timestamp, transaction, numeric sequence) and keeps a repeat once', () => {
    const at = (ns: bigint) => (T0 + ns) as typeof T0;
    const r = (ts: bigint, txn: string, seq: string) =>
      record(txn, seq, 'NEW_ROW', [{ keys: { Id: '1' }, newValues: {}, oldValues: {} }], {
        commitTimestamp: at(ts),
      });
    const given = [r(2n, 'b', '10'), r(1n, 'z', '0'), r(2n, 'b', '9'), r(2n, 'a', '0'), r(2n, 'b', '10')];
    const ordered = canonicalOrder(given).map(
      (x) => `${x.commitTimestamp - T0}/${x.serverTransactionId}/${x.recordSequence}`,
    );
    expect(ordered).toEqual(['1/z/0', '2/a/0', '2/b/9', '2/b/10']);
    // Any split of a canonical sequence into batches gives the same rows per destination, in the same order.
    const all = canonicalOrder(given);
    const dest = (t: string) => (t === 'T' ? 'h' : undefined);
    const whole = historyRowsByDestination(all, dest)
      .get('h')!
      .map((x) => x.change_id);
    const parts = [all.slice(0, 1), all.slice(1, 3), all.slice(3)].flatMap(
      (b) =>
        historyRowsByDestination(canonicalOrder(b), dest)
          .get('h')
          ?.map((x) => x.change_id) ?? [],
    );
    expect(parts).toEqual(whole);
  });

  it('keeps one sequence per destination fed by several source tables, in record order', () => {
    const a = record('t1', '0', 'NEW_ROW', [{ keys: { Id: '1' }, newValues: {}, oldValues: {} }], {
      tableName: 'A',
    });
    const b = record('t2', '0', 'NEW_ROW', [{ keys: { Id: '2' }, newValues: {}, oldValues: {} }], {
      tableName: 'B',
      commitTimestamp: (T0 + 1n) as typeof T0,
    });
    const c = record('t3', '0', 'NEW_ROW', [{ keys: { Id: '3' }, newValues: {}, oldValues: {} }], {
      tableName: 'A',
      commitTimestamp: (T0 + 2n) as typeof T0,
    });
    const out = historyRowsByDestination([a, b, c], (t) => (t === 'C' ? undefined : 'shared'));
    expect([...out.keys()]).toEqual(['shared']);
    expect(out.get('shared')!.map((r) => r.table_name)).toEqual(['A', 'B', 'A']);
  });
});
