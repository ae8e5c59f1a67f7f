/**
 * The sink contract (replica, completeness), run against every implementation: in-memory and BigQuery on
 * the emulator through the official clients. The history sink has its own (history-sink.contract.ts).
 */

import { encodeChangeSequenceNumber } from '../../shared/domain/cdc-sequence';
import type {
  ColumnType,
  DataChangeRecord,
  Mod,
  ModType,
  ValueCaptureType,
} from '../../shared/domain/change-record';
import type { TableSchema } from '../../shared/domain/information-schema';
import {
  buildReplicaChanges,
  type ReplicaDelete,
  type ReplicaUpsert,
} from '../../shared/domain/replica-rows';
import { formatTimestamp, fromNanos, type Timestamp } from '../../shared/domain/timestamp';
import type { CompletenessSink, HistorySink, ReplicaSink } from '../../shared/ports/sinks';
import { tableOf } from '../unit/domain/support/table-schemas';

/** Cell values as text (NULL stays null), so both implementations compare alike. */
export type TextRow = Record<string, string | null>;

/** One implementation under test, with read-back helpers in the implementation's own terms. */
export interface SinkHarness {
  replica: ReplicaSink;
  history: HistorySink;
  completeness: CompletenessSink;
  replicaRows(destination: string): Promise<TextRow[]>;
  replicaTable(destination: string): Promise<{ fields: string[]; primaryKey: string[] } | undefined>;
  completenessRows(): Promise<Array<{ source_table: string; destination: string; watermark_ns: string }>>;
  close?(): Promise<void>;
}

const T0 = 1_700_000_000_000_000_000n;
/** A commit timestamp `n` microseconds and 7 ns after T0 (the nanoseconds reach the sequence number). */
export const at = (n: number): Timestamp => fromNanos(T0 + BigInt(n) * 1000n + 7n);

const column = (name: string, code: string, ordinalPosition: number, isPrimaryKey = false): ColumnType => ({
  name,
  type: { code },
  isPrimaryKey,
  ordinalPosition,
});

/** Singers(SingerId INT64 key, Name STRING, Bio STRING[, Extra STRING]). */
export function singers(withExtra = false): TableSchema {
  const columns = [
    { name: 'SingerId', type: { code: 'INT64' }, nullable: false, ordinalPosition: 1 },
    { name: 'Name', type: { code: 'STRING' }, nullable: true, ordinalPosition: 2 },
    { name: 'Bio', type: { code: 'STRING' }, nullable: true, ordinalPosition: 3 },
  ];
  if (withExtra)
    columns.push({ name: 'Extra', type: { code: 'STRING' }, nullable: true, ordinalPosition: 4 });
  return { name: 'Singers', columns, primaryKey: ['SingerId'] };
}

/** A data-change record on Singers. */
export function record(p: {
  ts: Timestamp;
  modType: ModType;
  mods: Mod[];
  txn?: string;
  seq?: string;
  capture?: ValueCaptureType;
  extra?: boolean;
}): DataChangeRecord {
  const columnTypes = [
    column('SingerId', 'INT64', 1, true),
    column('Name', 'STRING', 2),
    column('Bio', 'STRING', 3),
  ];
  if (p.extra) columnTypes.push(column('Extra', 'STRING', 4));
  return {
    kind: 'data-change',
    commitTimestamp: p.ts,
    recordSequence: p.seq ?? '00000000',
    serverTransactionId: p.txn ?? `txn-${p.ts}`,
    isLastRecordInTransactionInPartition: true,
    tableName: 'Singers',
    columnTypes,
    mods: p.mods,
    modType: p.modType,
    valueCaptureType: p.capture ?? 'NEW_ROW',
    numberOfRecordsInTransaction: 1,
    numberOfPartitionsInTransaction: 1,
    transactionTag: '',
    isSystemTransaction: false,
  };
}

const mod = (
  id: number,
  values: Record<string, string | null> = {},
  old: Record<string, string | null> = {},
) => ({
  keys: { SingerId: String(id) },
  newValues: values,
  oldValues: old,
});

/** The writable replica changes of some records. */
export function changesOf(...records: DataChangeRecord[]): Array<ReplicaUpsert | ReplicaDelete> {
  return buildReplicaChanges(records).changes.filter(
    (c): c is ReplicaUpsert | ReplicaDelete => c.kind === 'upsert' || c.kind === 'delete',
  );
}

/** The replica changes of one INSERT of singer `id` with `newValues`, committed at `at(ts)`. */
export const singerInsert = (id: number, newValues: Mod['newValues'], ts = 1) =>
  changesOf(
    record({
      ts: at(ts),
      modType: 'INSERT',
      mods: [{ keys: { SingerId: String(id) }, newValues, oldValues: {} }],
    }),
  );

const byId = (rows: TextRow[]) => [...rows].sort((a, b) => Number(a.SingerId) - Number(b.SingerId));

/** Registers the contract tests; `make` builds a fresh harness (fresh dataset) per test. */
export function sinkContract(label: string, make: () => Promise<SinkHarness>): void {
  describe(`Sink contract: ${label}`, () => {
    let h: SinkHarness;
    beforeEach(async () => {
      h = await make();
    });
    afterEach(async () => {
      await h.close?.();
    });

    it('creates the replica table with the key and only the watched columns, and is idempotent', async () => {
      await h.replica.ensureTable('singers', singers(), ['Name']);
      await h.replica.ensureTable('singers', singers(), ['Name']);
      expect(await h.replicaTable('singers')).toEqual({
        fields: ['SingerId', 'Name'],
        primaryKey: ['SingerId'],
      });
    });

    it('applies upserts and deletes by sequence number, not by arrival', async () => {
      await h.replica.ensureTable('singers', singers(), 'all');
      const insert = (id: number, name: string) =>
        record({ ts: at(1), modType: 'INSERT', mods: [mod(id, { Name: name, Bio: null })] });
      await h.replica.write('singers', changesOf(insert(1, 'a'), insert(2, 'b'), insert(3, 'c')));
      const update = (ts: number, id: number, name: string) =>
        record({ ts: at(ts), modType: 'UPDATE', mods: [mod(id, { Name: name, Bio: null })] });
      await h.replica.write('singers', changesOf(update(3, 1, 'a3')));
      await h.replica.write('singers', changesOf(update(2, 1, 'a2'))); // late and older: loses
      await h.replica.write('singers', changesOf(record({ ts: at(5), modType: 'DELETE', mods: [mod(2)] })));
      await h.replica.write('singers', changesOf(update(4, 2, 'b4'))); // older than the delete: loses
      // Two transactions at one timestamp on disjoint columns of key 3: both changes survive.
      const concurrent = [
        record({
          ts: at(6),
          txn: 'A',
          modType: 'UPDATE',
          capture: 'NEW_ROW_AND_OLD_VALUES',
          mods: [mod(3, { Name: 'n6', Bio: null }, { Name: 'c' })],
        }),
        record({
          ts: at(6),
          txn: 'B',
          seq: '1',
          modType: 'UPDATE',
          capture: 'NEW_ROW_AND_OLD_VALUES',
          mods: [mod(3, { Name: 'c', Bio: 'bio6' }, { Bio: null })],
        }),
      ];
      await h.replica.write('singers', changesOf(...concurrent));
      expect(byId(await h.replicaRows('singers'))).toEqual([
        { SingerId: '1', Name: 'a3', Bio: null },
        { SingerId: '3', Name: 'n6', Bio: 'bio6' },
      ]);
    });

    it('leaves the replica as one send would when a batch is re-sent', async () => {
      await h.replica.ensureTable('singers', singers(), 'all');
      const batch = changesOf(
        record({
          ts: at(1),
          modType: 'INSERT',
          mods: [mod(1, { Name: 'a', Bio: 'x' }), mod(2, { Name: 'b', Bio: 'y' })],
        }),
        record({ ts: at(2), modType: 'DELETE', mods: [mod(2)] }),
        record({ ts: at(3), modType: 'UPDATE', mods: [mod(1, { Name: 'a2', Bio: 'x' })] }),
      );
      await h.replica.write('singers', batch);
      const once = byId(await h.replicaRows('singers'));
      await h.replica.write('singers', batch);
      expect(byId(await h.replicaRows('singers'))).toEqual(once);
      expect(once).toEqual([{ SingerId: '1', Name: 'a2', Bio: 'x' }]);
    });

    it('adds a column the source gained mid-stream', async () => {
      await h.replica.ensureTable('singers', singers(), ['Name']);
      await h.replica.write(
        'singers',
        changesOf(record({ ts: at(1), modType: 'INSERT', mods: [mod(1, { Name: 'a' })] })),
      );
      await h.replica.ensureTable('singers', singers(true), ['Name', 'Extra']);
      const withExtra = record({
        ts: at(2),
        modType: 'INSERT',
        extra: true,
        mods: [mod(2, { Name: 'b', Extra: 'e' })],
      });
      await h.replica.write('singers', changesOf(withExtra));
      expect((await h.replicaTable('singers'))?.fields).toEqual(['SingerId', 'Name', 'Extra']);
      expect(byId(await h.replicaRows('singers'))).toEqual([
        { SingerId: '1', Name: 'a', Extra: null },
        { SingerId: '2', Name: 'b', Extra: 'e' },
      ]);
    });

    it('refuses a value for a column the table does not have: nothing is written, nothing dropped', async () => {
      await h.replica.ensureTable('singers', singers(), ['Name']);
      const withExtra = record({
        ts: at(1),
        modType: 'INSERT',
        extra: true,
        mods: [mod(1, { Name: 'a', Extra: 'e' })],
      });
      const err = await h.replica.write('singers', changesOf(withExtra)).then(
        () => undefined,
        (e: unknown) => e as { kind?: string; message?: string },
      );
      expect(err).toMatchObject({ kind: 'permanent', message: expect.stringMatching(/column Extra/) });
      expect(await h.replicaRows('singers')).toEqual([]);
    });

    it('widens a column in place and refuses a type change BigQuery cannot apply, naming it', async () => {
      const counted = (type: string): TableSchema => ({
        name: 'Counts',
        primaryKey: ['Id'],
        columns: [
          { name: 'Id', type: { code: 'INT64' }, nullable: false, ordinalPosition: 1 },
          { name: 'N', type: { code: type }, nullable: true, ordinalPosition: 2 },
        ],
      });
      await h.replica.ensureTable('counts', counted('INT64'), 'all');
      const row = (n: string): ReplicaUpsert => ({
        kind: 'upsert',
        table: 'Counts',
        commitTimestamp: at(1),
        key: { Id: '1' },
        sequence: encodeChangeSequenceNumber({ commitTimestamp: at(1), recordSequence: '0', modIndex: 0 }),
        row: { Id: '1', N: n },
      });
      await h.replica.write('counts', [row('42')]);
      await h.replica.ensureTable('counts', counted('NUMERIC'), 'all');
      expect(await h.replicaRows('counts')).toEqual([{ Id: '1', N: '42' }]);
      const err = await h.replica.ensureTable('counts', counted('STRING'), 'all').then(
        () => undefined,
        (e: unknown) => e as { kind?: string; message?: string },
      );
      expect(err?.kind).toBe('permanent');
      expect(err?.message).toMatch(
        /column Counts\.N changed type: it is now STRING in Spanner, which maps to BigQuery STRING, but the replica table counts holds it as NUMERIC.*Fix: drop/,
      );
    });

    it('keeps TIMESTAMP keys that differ below a microsecond as distinct rows (exact companion key)', async () => {
      const events = tableOf(
        'Events',
        ['At'],
        [
          ['At', 'TIMESTAMP'],
          ['Name', 'STRING'],
        ],
      );
      await h.replica.ensureTable('events', events, 'all');
      expect(await h.replicaTable('events')).toEqual({
        fields: ['At', 'At__ns', 'Name'],
        primaryKey: ['At', 'At__ns'],
      });
      const eventRecord = (
        ts: Timestamp,
        modType: ModType,
        keys: string[],
        name: string | null,
      ): DataChangeRecord => ({
        ...record({ ts, modType, mods: [] }),
        tableName: 'Events',
        columnTypes: [
          { name: 'At', type: { code: 'TIMESTAMP' }, isPrimaryKey: true, ordinalPosition: 1 },
          { name: 'Name', type: { code: 'STRING' }, isPrimaryKey: false, ordinalPosition: 2 },
        ],
        mods: keys.map(
          (k): Mod => ({
            keys: { At: k },
            newValues: modType === 'DELETE' ? {} : { Name: name },
            oldValues: {},
          }),
        ),
      });
      const one = '2024-01-01T00:00:00.000000001Z';
      const two = '2024-01-01T00:00:00.000000002Z';
      await h.replica.write('events', changesOf(eventRecord(at(1), 'INSERT', [one, two], 'n')));
      await h.replica.write('events', changesOf(eventRecord(at(2), 'DELETE', [one], null)));
      const rows = await h.replicaRows('events');
      expect(rows.map((r) => [r.At__ns, r.Name])).toEqual([[two, 'n']]);
      expect(rows[0]?.At).not.toBeNull();
    });

    it('keeps the newest watermark per source and destination table: replica and history apart', async () => {
      await h.completeness.record([
        { sourceTable: 'Albums', destination: 'albums', watermark: at(100) },
        { sourceTable: 'Singers', destination: 'singers', watermark: at(200) },
        { sourceTable: 'Singers', destination: 'singers_history', watermark: at(200) },
      ]);
      await h.completeness.record([
        { sourceTable: 'Albums', destination: 'albums', watermark: at(50) }, // late and older: loses
        { sourceTable: 'Singers', destination: 'singers', watermark: at(300) },
      ]);
      const rows = (await h.completenessRows()).sort(
        (a, b) => a.source_table.localeCompare(b.source_table) || a.destination.localeCompare(b.destination),
      );
      expect(rows).toEqual([
        { source_table: 'Albums', destination: 'albums', watermark_ns: formatTimestamp(at(100)) },
        { source_table: 'Singers', destination: 'singers', watermark_ns: formatTimestamp(at(300)) },
        { source_table: 'Singers', destination: 'singers_history', watermark_ns: formatTimestamp(at(200)) },
      ]);
    });
  });
}
