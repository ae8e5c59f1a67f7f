import {
  decodeJob,
  decodePartition,
  encodeJob,
  encodePartition,
  jobObjects,
  parsePartitionTask,
  partitionTaskId,
} from '../../../shared/domain/backfill/job';
import { jobView } from '../../../shared/domain/backfill/progress';
import { snapshotQuerySql } from '../../../shared/domain/backfill/query';
import { snapshotHistoryRow, snapshotUpsert } from '../../../shared/domain/backfill/rows';
import {
  isSnapshotTooOld,
  raiseRetentionStatement,
  snapshotTooOldError,
} from '../../../shared/domain/backfill/snapshot-errors';
import { isTerminal, transition } from '../../../shared/domain/backfill/state';
import {
  compareChangeSequenceNumbers,
  encodeChangeSequenceNumber,
} from '../../../shared/domain/cdc-sequence';
import { fromNanos } from '../../../shared/domain/timestamp';
import { ordersJob } from '../../app/backfill/orders-job';
import { ORDERS } from '../../app/backfill/support';

const T = fromNanos(1_714_557_600_123_456_789n);
const job = ordersJob({
  id: 'j1',
  state: 'planning',
  snapshot: { transaction: 'abc', readTimestamp: T },
  partitions: 2,
  createdAt: T,
  startedAt: null,
  schema: {
    ...ORDERS,
    columns: [{ ...ORDERS.columns[0]!, type: { code: 'ARRAY', arrayElementType: { code: 'INT64' } } }],
  },
});

describe('job codec', () => {
  it('round-trips with nanosecond timestamps', () => {
    expect(decodeJob(encodeJob(job))).toEqual(job);
    expect(encodeJob(job).toString()).toContain('"2024-05-01T10:00:00.123456789Z"');
    const p = { index: 3, table: 'Orders', handle: 'aGk=' };
    expect(decodePartition(encodePartition(p))).toEqual(p);
  });

  it('refuses corrupt objects naming the problem', () => {
    expect(() => decodeJob(Buffer.from('{'))).toThrow('corrupt backfill job');
    expect(() =>
      decodeJob(Buffer.from(JSON.stringify({ ...JSON.parse(encodeJob(job).toString()), state: 'x' }))),
    ).toThrow('state');
  });

  it('names objects under the pipeline and derives stable task ids', () => {
    expect(jobObjects.job('demo', 'j1')).toBe('demo/backfills/j1/job.json');
    expect(jobObjects.done('demo', 'j1', 7)).toBe('demo/backfills/j1/done/000007.json');
    expect(jobObjects.partition('demo', 'j1', 'p1', 7)).toBe('demo/backfills/j1/plans/p1/000007.json');
    expect(partitionTaskId('j1', 7)).toBe(partitionTaskId('j1', 7));
    expect(partitionTaskId('j1', 7)).not.toBe(partitionTaskId('j1', 8));
    expect(parsePartitionTask({ pipeline: 'demo', job: 'j1', partition: 2 })).toEqual({
      pipeline: 'demo',
      job: 'j1',
      partition: 2,
    });
    expect(() => parsePartitionTask({ job: 'j1' })).toThrow('bad backfill task');
  });
});

describe('state machine', () => {
  it('moves planning → running → succeeded and never leaves a terminal state', () => {
    const running = transition(job, { kind: 'planned', at: T })!;
    expect(running.state).toBe('running');
    expect(transition(running, { kind: 'planned', at: T })).toBeUndefined();
    expect(transition(job, { kind: 'all-partitions-done', at: T })).toBeUndefined();
    const done = transition(running, { kind: 'all-partitions-done', at: T })!;
    expect(done).toMatchObject({ state: 'succeeded', finishedAt: T });
    expect(isTerminal(done.state)).toBe(true);
    expect(transition(done, { kind: 'cancelled', at: T })).toBeUndefined();
    expect(transition(running, { kind: 'failed', at: T, error: 'boom' })).toMatchObject({
      state: 'failed',
      error: 'boom',
    });
    expect(transition(running, { kind: 'cancelled', at: T })?.state).toBe('cancelled');
  });

  it('reports progress from done markers, per table and as a rate', () => {
    const view = jobView(
      { ...job, state: 'running', startedAt: T },
      [
        { name: 'demo/backfills/job1/done/000000.json', metadata: { 'sluice-rows': '5000' } },
        { name: 'demo/backfills/job1/done/000001.json', metadata: { 'sluice-rows': 'bad' } },
      ],
      fromNanos(T + 2_000_000_000n),
    );
    expect(view).toMatchObject({
      partitions: { done: 2, total: 2 },
      rowsWritten: 5000,
      rowsPerSecond: 2500,
      snapshotTimestamp: '2024-05-01T10:00:00.123456789Z',
      startedAt: '2024-05-01T10:00:00.123456789Z',
      finishedAt: null,
      tables: [{ name: 'Orders', replica: 'orders', partitions: 2, partitionsDone: 2, rowsWritten: 5000 }],
    });
    expect(jobView(job, []).rowsPerSecond).toBeNull();
  });
});

describe('snapshot rows', () => {
  const row = { OrderId: '7', Customer: 'ann' };

  it('are UPSERTs at (T, 0, 0): every later change wins, every earlier one loses', () => {
    const u = snapshotUpsert('Orders', ['OrderId'], row, T);
    expect(u).toMatchObject({ kind: 'upsert', key: { OrderId: '7' }, row });
    const before = encodeChangeSequenceNumber({
      commitTimestamp: fromNanos(T - 1n),
      recordSequence: 99n,
      modIndex: 9,
    });
    const after = encodeChangeSequenceNumber({
      commitTimestamp: fromNanos(T + 1n),
      recordSequence: 0n,
      modIndex: 0,
    });
    expect(compareChangeSequenceNumbers(u.sequence, before)).toBe(1);
    expect(compareChangeSequenceNumbers(u.sequence, after)).toBe(-1);
  });

  it('history rows have the SNAPSHOT mod type and an identity stable across re-reads', () => {
    const a = snapshotHistoryRow('Orders', ['OrderId'], row, T, 'j1');
    const b = snapshotHistoryRow('Orders', ['OrderId'], { ...row }, T, 'j1');
    expect(a).toEqual(b);
    expect(a).toMatchObject({
      mod_type: 'SNAPSHOT',
      keys: '{"OrderId":"7"}',
      new_values: '{"Customer":"ann"}',
    });
    expect(a.change_id).not.toBe(
      snapshotHistoryRow('Orders', ['OrderId'], { OrderId: '8' }, T, 'j1').change_id,
    );
  });
});

describe('query and errors', () => {
  it('quotes the projection per dialect and refuses odd names', () => {
    expect(snapshotQuerySql('GOOGLE_STANDARD_SQL', 'Orders', ['OrderId', 'Amount'])).toBe(
      'SELECT `OrderId`, `Amount` FROM `Orders`',
    );
    expect(snapshotQuerySql('POSTGRESQL', 'orders', ['id'])).toBe('SELECT "id" FROM "orders"');
    // A table of a named schema: each part quoted on its own.
    expect(snapshotQuerySql('GOOGLE_STANDARD_SQL', 'sales.Orders', ['Id'])).toBe(
      'SELECT `Id` FROM `sales`.`Orders`',
    );
    expect(snapshotQuerySql('POSTGRESQL', 'sales.orders', ['id'])).toBe('SELECT "id" FROM "sales"."orders"');
    expect(() => snapshotQuerySql('POSTGRESQL', 'a.b.c', ['id'])).toThrow('invalid table name');
    expect(() => snapshotQuerySql('POSTGRESQL', 'orders', ['x"; DROP'])).toThrow('invalid identifier');
    expect(() => snapshotQuerySql('POSTGRESQL', 'orders', [])).toThrow('no columns');
  });

  it('recognises a too-old snapshot and says how to raise the retention in each dialect', () => {
    expect(
      isSnapshotTooOld({ code: 9, message: 'Read timestamp is older than the version_retention_period' }),
    ).toBe(true);
    expect(isSnapshotTooOld({ code: 'FAILED_PRECONDITION', details: 'snapshot too old' })).toBe(true);
    expect(isSnapshotTooOld({ code: 9, message: 'Transaction has been rolled back' })).toBe(false);
    expect(isSnapshotTooOld('nope')).toBe(false);
    expect(raiseRetentionStatement('POSTGRESQL', 'shop')).toBe(
      `ALTER DATABASE "shop" SET spanner.version_retention_period = '7d'`,
    );
    const err = snapshotTooOldError(T, 'GOOGLE_STANDARD_SQL', 'shop');
    expect(err.kind).toBe('permanent');
    expect(err.message).toContain('2024-05-01T10:00:00.123456789Z');
  });
});
