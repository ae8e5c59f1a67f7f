import fc from 'fast-check';
import { handleBackfillRequest, WORKER_PATH } from '../../../functions/backfill/routes';
import { runPartition, startBackfill } from '../../../shared/app/backfill';
import { parsePartitionTask } from '../../../shared/domain/backfill/job';
import { encodeChangeSequenceNumber } from '../../../shared/domain/cdc-sequence';
import type { ReplicaDelete, ReplicaUpsert } from '../../../shared/domain/replica-rows';
import { fromNanos } from '../../../shared/domain/timestamp';
import { harness, seedOrders } from './support';

type H = ReturnType<typeof harness>;

async function call(
  h: H,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  let status = 0;
  let json: unknown;
  const res = {
    status(code: number) {
      status = code;
      return res;
    },
    json(b: unknown) {
      json = b;
    },
  };
  const raw = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  // As every caller sends them: Cloud Tasks, the CLI and the console send JSON (ADR-2301).
  headers = { 'content-type': 'application/json', ...headers };
  const matched = await handleBackfillRequest(
    h.deps,
    { method, path, body, rawBody: raw, header: (n) => headers[n.toLowerCase()] },
    res,
  );
  return { matched, status, json: json as Record<string, unknown> };
}

describe('backfill HTTP routes', () => {
  it('POST starts a job (202), GET reports progress, the worker route runs tasks, DELETE cancels', async () => {
    const h = harness();
    seedOrders(h, 4);
    const posted = await call(h, 'POST', '/backfills', { tables: ['Orders'] });
    expect(posted.status).toBe(202);
    expect(posted.json).toMatchObject({ id: 'job1', partitions: 3, status: '/backfills/job1' });
    const tasks = h.queue.drain();
    const ran = await call(h, 'POST', WORKER_PATH, tasks[0]!.body, { 'x-cloudtasks-taskretrycount': '2' });
    expect(ran).toMatchObject({ status: 200, json: { kind: 'done' } });
    expect(h.lines.some((l) => l.includes('"task.start"') && l.includes('"retryCount":2'))).toBe(true);
    const got = await call(h, 'GET', '/backfills/job1');
    expect(got.json).toMatchObject({ state: 'running', partitions: { done: 1, total: 3 } });
    expect((await call(h, 'GET', '/backfills')).json).toMatchObject({ backfills: [{ id: 'job1' }] });
    expect((await call(h, 'DELETE', '/backfills/job1')).json).toMatchObject({ state: 'cancelled' });
    expect(await call(h, 'POST', WORKER_PATH, tasks[1]!.body)).toMatchObject({
      status: 200,
      json: { kind: 'skipped' },
    });
    expect((await call(h, 'GET', '/backfills/nope')).status).toBe(404);
    const put = await call(h, 'PUT', '/backfills/job1');
    expect(put).toMatchObject({ matched: true, status: 405 });
  });

  it.each([
    [undefined, 'request body is empty'],
    [{ tables: ['Nope'] }, 'unknown table Nope'],
    [{ tables: ['Orders'], priority: 'urgent' }, 'priority'],
    [{ tables: ['Orders'], padding: 'x'.repeat(70_000) }, 'the limit is'],
  ])('answers 400 to %#', async (body, message) => {
    const h = harness();
    const r = await call(h, 'POST', '/backfills', body);
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.json)).toContain(message);
    expect(h.queue.pending).toHaveLength(0);
  });

  it('answers Cloud Tasks 503 for a retryable failure and 200 for a malformed task', async () => {
    const h = harness();
    seedOrders(h, 3);
    await call(h, 'POST', '/backfills', { tables: ['Orders'], maxPartitions: 1 });
    h.snapshots.failReads(1, Object.assign(new Error('unavailable'), { code: 14 }));
    const [task] = h.queue.drain();
    expect((await call(h, 'POST', WORKER_PATH, task!.body)).status).toBe(503);
    expect((await call(h, 'POST', WORKER_PATH, { job: 1 })).status).toBe(200);
  });

  it('serves GET /status from the status object once the scheduler wrote it', async () => {
    const h = harness();
    expect((await call(h, 'GET', '/status')).status).toBe(404);
    await h.store.write('demo/status.json', Buffer.from('{"watermark":"x"}'), { ifGeneration: 0 });
    expect(await call(h, 'GET', '/status')).toMatchObject({ status: 200, json: { watermark: 'x' } });
  });
});

describe('hand-over to the stream', () => {
  it('replica equals the source whatever the order of backfill rows and stream changes after T', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 6 }), fc.boolean(), fc.integer({ min: 0, max: 99 })), {
          maxLength: 12,
        }),
        fc.array(fc.tuple(fc.integer({ min: 1, max: 6 }), fc.boolean(), fc.integer({ min: 0, max: 99 })), {
          maxLength: 12,
        }),
        fc.integer({ min: 0, max: 24 }),
        async (before, after, cut) => {
          const h = harness();
          const commit = ([id, del, amount]: [number, boolean, number]) => {
            const at = h.tick();
            const row = { OrderId: String(id), Customer: 'c', Amount: String(amount), Secret: 's' };
            h.snapshots.write('Orders', ['OrderId'], row, at, del);
            return { at, row, del };
          };
          before.forEach(commit);
          const started = await startBackfill(h.deps, {
            tables: ['Orders'],
          });
          if (!started.ok) throw new Error(started.problems.join());
          // Changes committed after T, as the stream delivers them (real sequence numbers).
          const stream = after.map(commit).map(({ at, row, del }): ReplicaUpsert | ReplicaDelete => {
            const key = { OrderId: row.OrderId };
            const sequence = encodeChangeSequenceNumber({
              commitTimestamp: at,
              recordSequence: 0n,
              modIndex: 0,
            });
            const common = { table: 'Orders', commitTimestamp: at, key, sequence };
            return del
              ? { ...common, kind: 'delete', row: key }
              : { ...common, kind: 'upsert', row: { ...key, Customer: 'c', Amount: row.Amount } };
          });
          const tasks = h.queue.drain();
          const split = Math.min(cut, stream.length);
          await h.replica.write('orders', stream.slice(split));
          for (const t of tasks) await runPartition(h.deps, parsePartitionTask(t.body));
          await h.replica.write('orders', stream.slice(0, split));
          const expected = h.snapshots
            .rowsAt('Orders', fromNanos(h.now()))
            .map(({ Secret: _s, ...r }) => r)
            .sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
          expect(h.replica.rows('orders')).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });
});
