/**
 * A record the pipeline cannot map (a poison record) under both bad-record policies: `fail` stops only its
 * partition, at the boundary the sinks acknowledged, named in the status; `dead-letter` sets it aside and the
 * partition goes on. Other partitions keep flowing either way, and no history row is written twice.
 */

import { keyHash } from '../../shared/domain/log-values';
import { UnrepresentableError } from '../../shared/domain/record-errors';
import { addMillis } from '../../shared/domain/timestamp';
import { Harness, T0 } from './support/harness';
import { settle } from './support/settle';
import { readDataChangesSlowly } from './support/slow-reads';

/** Commits order 2 with `val` between orders 1 ('a') and 3 ('c'), 100 ms apart, and runs the pipeline past them. */
async function commitBetweenTwo(h: Harness, val: string) {
  h.script.commit(addMillis(T0, 100), [{ table: 'Orders', id: 1, val: 'a' }]);
  h.script.commit(addMillis(T0, 200), [{ table: 'Orders', id: 2, val }]);
  h.script.commit(addMillis(T0, 300), [{ table: 'Orders', id: 3, val: 'c' }]);
  h.now = addMillis(T0, 2_000);
  await settle(h);
}

/** At the next tick no partition has failed and one Orders record is set aside as unrepresentable. */
async function expectOneUnrepresentableSetAside(h: Harness) {
  const status = (await h.tick()).status!;
  expect(status.partitions.failed).toBe(0);
  expect(status.deadLetters).toMatchObject({
    pending: 1,
    byTable: { Orders: 1 },
    byReason: { 'permanent:UnrepresentableError': 1 },
  });
}

/** Ids 1..7 live on the first root partition, 8..15 on the second. */
async function poisoned(policy: 'fail' | 'dead-letter') {
  const h = new Harness({ config: { onBadRecord: policy } });
  h.script.commit(addMillis(T0, 100), [
    { table: 'Orders', id: 1, val: 'a' },
    { table: 'Items', id: 9, val: 'x' },
  ]);
  h.now = addMillis(T0, 1_000);
  await h.tick();
  await h.drain();
  h.script.commit(addMillis(T0, 1_100), [{ table: 'Orders', id: 2, val: 'b' }]);
  h.script.commit(addMillis(T0, 1_200), [{ table: 'Orders', id: 3, val: 'poison' }]);
  // Delivered as a number in its STRING column: it cannot be mapped.
  h.script.poisoned.set('Orders/3', 12345);
  h.script.commit(addMillis(T0, 1_300), [{ table: 'Items', id: 4, val: 'after' }]);
  h.script.commit(addMillis(T0, 1_400), [{ table: 'Items', id: 10, val: 'other' }]);
  return h;
}

describe('a poison record', () => {
  it('under fail: its partition fails at once, keeps its acknowledged position, status names the record; others flow', async () => {
    const h = await poisoned('fail');
    await settle(h);
    const status = (await h.tick()).status!;
    expect(status.partitions.failed).toBe(1);
    const [err] = status.lastErrors;
    expect(err).toMatchObject({
      kind: 'permanent',
      // The status shows the key as its hash under the default SLUICE_LOG_VALUES=none (ADR-2307).
      record: { table: 'Orders', column: 'Val', key: keyHash('{"Id":"3"}') },
    });
    expect(err!.message).toMatch(/Orders\.Val/);
    // One attempt: a permanent failure is not retried.
    expect(h.outcomes.filter((o) => o.outcome === 'failed')).toHaveLength(1);
    expect(h.outcomes.every((o) => o.status === 200)).toBe(true);
    const failed = (await h.ledger.readPartition(0, err!.partition!))!.value;
    expect(failed.state).toBe('failed');
    expect(failed.position).toBeGreaterThanOrEqual(addMillis(T0, 1_000) - 1n);
    expect(failed.position).toBeLessThan(addMillis(T0, 1_100));
    // The other partition went on; the failed one stopped before the batch holding the poison.
    expect(h.replica.rows('items').map((r) => r.Id)).toEqual(['9', '10']);
    expect(h.replica.rows('orders').map((r) => r.Id)).toEqual(['1']);
    expect(h.history.rows('orders_history')).toHaveLength(h.history.distinct('orders_history'));
    const logged = h.events('task.failed');
    expect(logged.length).toBeLessThanOrEqual(1);
  });

  it('under dead-letter: the record is set aside, counted, and the partition goes on', async () => {
    const h = await poisoned('dead-letter');
    await settle(h);
    const status = (await h.tick()).status!;
    expect(status.partitions.failed).toBe(0);
    expect(h.replica.rows('items').map((r) => r.Id)).toEqual(['4', '9', '10']);
    expect(h.replica.rows('orders').map((r) => r.Id)).toEqual(['1', '2']);
    expect(status.deadLetters).toMatchObject({ pending: 1, pendingRecords: 1, byTable: { Orders: 1 } });
    // Its history row is written, once, like every other mod's.
    expect(h.history.rows('orders_history')).toHaveLength(3);
    expect(h.history.distinct('orders_history')).toBe(3);
  });
});

describe('dead letters across a re-read', () => {
  it('a window re-read with another flush split writes no second letter holding the same records', async () => {
    const h = new Harness({
      roots: 1,
      config: { onBadRecord: 'dead-letter', flush: { intervalMs: 1_000, checkpointMs: 300_000 } },
    });
    h.script.commit(addMillis(T0, 100), [{ table: 'Orders', id: 3, val: 'poison' }]);
    h.script.commit(addMillis(T0, 200), [{ table: 'Orders', id: 5, val: 'poison' }]);
    h.script.commit(addMillis(T0, 300), [{ table: 'Orders', id: 6, val: 'good' }]);
    h.script.poisoned.set('Orders/3', 1);
    h.script.poisoned.set('Orders/5', 2);
    h.now = addMillis(T0, 2_000);
    await h.tick();
    // First attempt: the records come in one flush; both go to the dead letters, then the history append
    // fails (after the letters were written) and the window is retried.
    h.history.faults.fail(1, 14);
    const [task] = h.queue.drain();
    expect(await h.deliver(task!)).toMatchObject({ status: 503 });
    // The retry reads slowly: every record is its own flush.
    readDataChangesSlowly(h, 1_500);
    await settle(h);
    const status = (await h.tick()).status!;
    expect(status.partitions.failed).toBe(0);
    expect(status.deadLetters).toMatchObject({ pending: 2, pendingRecords: 2, byTable: { Orders: 2 } });
    const { items } = await h.deadLetters.page();
    expect(items.map((l) => l.records)).toEqual([1, 1]);
    expect(h.replica.rows('orders').map((r) => r.Id)).toEqual(['6']);
    expect(h.history.rows('orders_history')).toHaveLength(3);
    expect(h.history.distinct('orders_history')).toBe(3);
  });
});

describe('a row too large to send', () => {
  it('under dead-letter: only its record is set aside; the batch is written without it', async () => {
    const h = new Harness({ roots: 1, config: { onBadRecord: 'dead-letter' } });
    const write = h.replica.write.bind(h.replica);
    // What the BigQuery sink raises for a row larger than any AppendRows request may carry.
    h.replica.write = async (destination, changes) => {
      const i = changes.findIndex((c) => c.row.Val === 'huge');
      if (i >= 0) throw new UnrepresentableError('row-too-large', destination, 'a row is too large', i);
      return write(destination, changes);
    };
    await commitBetweenTwo(h, 'huge');
    await expectOneUnrepresentableSetAside(h);
    expect(h.replica.rows('orders').map((r) => r.Id)).toEqual(['1', '3']);
    expect(h.history.rows('orders_history')).toHaveLength(3);
  });
});

describe('a history row larger than an AppendRows request', () => {
  /** A value whose history row (its JSON) is over BigQuery's 20 MB request limit. */
  const huge = 'x'.repeat(22 * 1024 * 1024);

  async function oversized(policy: 'fail' | 'dead-letter') {
    const h = new Harness({ roots: 1, config: { onBadRecord: policy } });
    await commitBetweenTwo(h, huge);
    return h;
  }

  it('under dead-letter: its record is set aside and the other rows are appended once each', async () => {
    const h = await oversized('dead-letter');
    await expectOneUnrepresentableSetAside(h);
    const rows = h.history.rows('orders_history');
    expect(rows.map((r) => JSON.parse(r.keys).Id)).toEqual(['1', '3']);
    expect(h.history.distinct('orders_history')).toBe(2);
    // The listing names what finds the row: table, key, commit timestamp and reason.
    const { items } = await h.deadLetters.page({ details: true });
    expect(items).toEqual([
      expect.objectContaining({
        table: 'Orders',
        key: '{"Id":"2"}',
        column: 'Val',
        commitTimestamp: '2026-01-01T00:00:00.200000000Z',
        reason: 'permanent:UnrepresentableError',
        message: expect.stringMatching(/AppendRows request may carry/),
      }),
    ]);
  });

  it('under fail: its partition fails naming the record, before any later row', async () => {
    const h = await oversized('fail');
    const status = (await h.tick()).status!;
    expect(status.partitions.failed).toBe(1);
    expect(status.lastErrors[0]).toMatchObject({
      kind: 'permanent',
      record: { table: 'Orders', key: keyHash('{"Id":"2"}') },
    });
    expect(h.history.rows('orders_history').map((r) => JSON.parse(r.keys).Id)).not.toContain('3');
  });
});
