/**
 * The operator's failure routes through the backfill function's HTTP handler, over the reader's in-memory
 * pipeline: a failed partition retried after the fix, dead letters listed and replayed once, bad input named.
 */
import { keyHash } from '../../shared/domain/log-values';
import { addMillis } from '../../shared/domain/timestamp';
import { Harness, T0 } from './support/harness';
import { call } from './support/operator-http';
import { settle } from './support/settle';

/** Orders 3 is rejected by the replica (as BigQuery rejects a row for its content) until the fix. */
async function rejecting(policy: 'fail' | 'dead-letter') {
  const h = new Harness({ config: { onBadRecord: policy } });
  h.replica.rejectKeys.add('{"Id":"3"}');
  h.script.commit(addMillis(T0, 100), [{ table: 'Orders', id: 1, val: 'a' }]);
  h.script.commit(addMillis(T0, 200), [
    { table: 'Orders', id: 3, val: 'too long' },
    { table: 'Orders', id: 2, val: 'b' },
  ]);
  h.script.commit(addMillis(T0, 300), [{ table: 'Items', id: 4, val: 'same partition, later' }]);
  h.now = addMillis(T0, 1_000);
  await settle(h);
  return h;
}

describe('operator routes', () => {
  it('POST /partitions/retry restarts a failed partition; after the fix it catches up with no duplicate history', async () => {
    const h = await rejecting('fail');
    let status = (await h.tick()).status!;
    expect(status.partitions.failed).toBe(1);
    expect(status.lastErrors[0]).toMatchObject({ record: { table: 'Orders', key: keyHash('{"Id":"3"}') } });
    expect(status.lastErrors[0]!.message).toMatch(/value too long/);
    // Retried before the fix: it fails again, with its count.
    const first = await call(h, 'POST', '/partitions/retry');
    expect(first).toMatchObject({ status: 200, json: { retried: [status.lastErrors[0]!.partition] } });
    await settle(h, 2);
    status = (await h.tick()).status!;
    expect(status.partitions.failed).toBe(1);
    h.replica.rejectKeys.clear();
    const again = await call(h, 'POST', '/partitions/retry', {
      query: { partition: status.lastErrors[0]!.partition },
    });
    expect(again.status).toBe(200);
    await settle(h);
    status = (await h.tick()).status!;
    expect(status.partitions.failed).toBe(0);
    expect(status.lastErrors).toEqual([]);
    expect(h.replica.rows('orders')).toEqual(h.expected('Orders'));
    expect(h.replica.rows('items')).toEqual(h.expected('Items'));
    expect(h.history.rows('orders_history')).toHaveLength(3);
    expect(h.history.distinct('orders_history')).toBe(3);
    // Nothing failed is left: a retry of everything does nothing.
    expect(await call(h, 'POST', '/partitions/retry')).toMatchObject({ status: 200, json: { retried: [] } });
  });

  it('POST /partitions/retry names bad input and unknown partitions, and answers 405 with Allow', async () => {
    const h = await rejecting('fail');
    const bad = await call(h, 'POST', '/partitions/retry', { query: { partition: 'nope' } });
    expect(bad.status).toBe(400);
    expect((bad.json.error as { message: string }).message).toMatch(
      /partition: "nope" is not a partition id/,
    );
    const twice = await call(h, 'POST', '/partitions/retry', { query: { partition: ['a', 'b'] } });
    expect(twice.status).toBe(400);
    const missing = await call(h, 'POST', '/partitions/retry', { query: { partition: 'f'.repeat(32) } });
    expect(missing.status).toBe(404);
    const get = await call(h, 'GET', '/partitions/retry');
    expect(get).toMatchObject({ status: 405, headers: { Allow: 'POST' } });
  });

  it('GET /dead-letters lists and counts; POST /dead-letters/replay applies each letter once after the fix', async () => {
    const h = await rejecting('dead-letter');
    expect(h.replica.rows('items').map((r) => r.Id)).toEqual(['4']);
    // Orders 2 and 3 are mods of one record (one transaction): the record is set aside whole.
    expect(h.replica.rows('orders').map((r) => r.Id)).toEqual(['1']);
    const listed = await call(h, 'GET', '/dead-letters');
    expect(listed.status).toBe(200);
    expect(listed.json.counts).toMatchObject({ pending: 1, pendingRecords: 1, byTable: { Orders: 1 } });
    const items = listed.json.items as Array<{ id: string; state: string; reason: string }>;
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ state: 'pending', reason: 'permanent:RowsRejectedError' });
    // Derived from the stored record: what an operator needs to find the row.
    expect(items[0]).toMatchObject({
      table: 'Orders',
      key: expect.stringMatching(/^\{"Id":"\d+"\}$/),
      commitTimestamp: expect.stringMatching(/^2026-01-01T00:00:\d\d\.\d{9}Z$/),
    });
    // Before the fix the replay fails and the letter stays pending, with the attempt recorded.
    const early = await call(h, 'POST', '/dead-letters/replay', { body: { ids: [items[0]!.id] } });
    expect(early).toMatchObject({ status: 200, json: { replayed: 0, failed: 1 } });
    h.replica.rejectKeys.clear();
    const replayed = await call(h, 'POST', '/dead-letters/replay');
    expect(replayed).toMatchObject({ status: 200, json: { replayed: 1, failed: 0 } });
    expect(h.replica.rows('orders')).toEqual(h.expected('Orders'));
    const second = await call(h, 'POST', '/dead-letters/replay', { body: { ids: [items[0]!.id] } });
    expect(second).toMatchObject({ status: 200, json: { replayed: 0, alreadyReplayed: 1 } });
    const after = await call(h, 'GET', '/dead-letters');
    expect(after.json.counts).toMatchObject({ pending: 0, replayed: 1 });
    // The history was written once, with the window: a replay adds none.
    expect(h.history.rows('orders_history')).toHaveLength(3);
    const status = (await h.tick()).status!;
    expect(status.deadLetters).toMatchObject({ pending: 0, replayed: 1 });
  });

  it("replaying every pending letter goes past 100 letters that still fail, following the answer's next", async () => {
    const h = new Harness({ config: { onBadRecord: 'dead-letter' } });
    for (let i = 0; i < 101; i++) {
      h.replica.rejectKeys.add(`{"Id":"${1000 + i}"}`);
      h.script.commit(addMillis(T0, 100 + i), [{ table: 'Orders', id: 1000 + i, val: 'x' }]);
    }
    h.now = addMillis(T0, 1_000);
    await settle(h);
    expect((await call(h, 'GET', '/dead-letters')).json.counts).toMatchObject({ pending: 101 });
    // The last letter's cause is fixed; the first 100 still fail.
    h.replica.rejectKeys.delete('{"Id":"1100"}');
    const first = await call(h, 'POST', '/dead-letters/replay');
    expect(first.json).toMatchObject({ replayed: 0, failed: 100, more: true });
    const next = first.json.next as string;
    expect(typeof next).toBe('string');
    const second = await call(h, 'POST', '/dead-letters/replay', { body: { after: next } });
    expect(second.json).toMatchObject({ replayed: 1, failed: 0, more: false });
    expect(second.json.next).toBeUndefined();
    expect(h.replica.rows('orders').map((r) => r.Id)).toEqual(['1100']);
  });

  it('bad replay and listing requests are named', async () => {
    const h = await rejecting('dead-letter');
    const notObject = await call(h, 'POST', '/dead-letters/replay', { body: [1] });
    expect(notObject.status).toBe(400);
    const badIds = await call(h, 'POST', '/dead-letters/replay', { body: { ids: ['../etc'], extra: 1 } });
    expect(badIds.status).toBe(400);
    expect((badIds.json.error as { problems: string[] }).problems).toEqual([
      'extra: unknown field (ids, table, after)',
      'ids[0]: "../etc" is not a dead-letter id',
    ]);
    const size = await call(h, 'GET', '/dead-letters', { query: { pageSize: '0' } });
    expect(size.status).toBe(400);
    expect(await call(h, 'DELETE', '/dead-letters')).toMatchObject({
      status: 405,
      headers: { Allow: 'GET' },
    });
  });
});

describe('backfill function edges', () => {
  it('a bad percent-encoding is a JSON 400, a non-JSON body 415, a wrong method 405 with Allow', async () => {
    const h = new Harness();
    const bad = await call(h, 'GET', '/backfills/%E0%A4%A');
    expect(bad.status).toBe(400);
    expect((bad.json.error as { message: string }).message).toMatch(/bad percent-encoding/);
    expect(await call(h, 'PUT', '/backfills')).toMatchObject({
      status: 405,
      headers: { Allow: 'GET, POST' },
    });
    expect(await call(h, 'POST', '/status')).toMatchObject({ status: 405, headers: { Allow: 'GET' } });
    const text = await call(h, 'POST', '/backfills', { body: 'tables=Orders', type: 'text/plain' });
    expect(text.status).toBe(415);
    expect((text.json.error as { message: string }).message).toMatch(/application\/json/);
    expect(await call(h, 'PATCH', '/backfills/job1')).toMatchObject({
      status: 405,
      headers: { Allow: 'GET, DELETE' },
    });
  });
});
