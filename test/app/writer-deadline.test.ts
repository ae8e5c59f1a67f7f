/**
 * The writer use case against its request deadline and failing calls: hung calls re-sent after their
 * timeout, attempts cut to the time left, later waves not sent after the deadline, a throwing batch call
 * failing only its own groups, and a dead letter that cannot be written leaving its mutations unapplied.
 */
import { MemoryObjectStore } from '../../shared/adapters/memory/object-store';
import { body, harness, insert, names, upsert } from './support/writer-harness';

test('a request-level rejection fails its groups (never routes them); a hung call is re-sent after its timeout', async () => {
  const h = harness({ SLUICE_WRITER_BATCH_WRITE_TIMEOUT_MS: '1000' });
  h.sink.inject({ kind: 'fail', code: 3, message: 'The transaction contains too many mutations.' });
  const a = await h.writer.handle(body(upsert(1), upsert(2)));
  expect(a.status).toBe(500);
  expect(a.body).toMatchObject({ failed: 2, routed: 0 });
  h.sink.inject({ kind: 'hang' });
  const b = await h.writer.handle(body(upsert(3)));
  expect(b.status).toBe(200);
  expect(b.body).toMatchObject({ applied: 1, mutationsRetried: 1, transientErrors: 1 });
});

test('a dead letter that cannot be written leaves its mutations unapplied: 503, so the producer retries', async () => {
  const failing = new MemoryObjectStore();
  failing.write = async () => {
    throw Object.assign(new Error('forbidden'), { code: 403 });
  };
  const h = harness({}, failing);
  await h.writer.handle(body(insert(1)));
  const a = await h.writer.handle(body(insert(1), insert(2)));
  expect(a.status).toBe(503);
  expect(a.body).toMatchObject({ applied: 1, routed: 0, unapplied: 1 });
  expect(a.body.failures).toEqual([
    expect.objectContaining({ index: 0, reason: 'dead-letter-write-failed' }),
  ]);
  expect(h.lines.some((l) => l.event === 'writer.dead-letter-failed' && l.severity === 'ERROR')).toBe(true);
});

/** 30 s per BatchWrite call within a 40 s request deadline, plus `env`. */
const fortySecondDeadline = (env: Record<string, string>) =>
  harness({
    SLUICE_WRITER_BATCH_WRITE_TIMEOUT_MS: '30000',
    SLUICE_WRITER_REQUEST_DEADLINE_MS: '40000',
    ...env,
  });

test('attempts after a backoff are cut to the time left before the request deadline', async () => {
  const h = fortySecondDeadline({
    SLUICE_WRITER_BACKOFF_INITIAL_MS: '15000',
    SLUICE_WRITER_BACKOFF_MAX_MS: '15000',
  });
  const timeouts: number[] = [];
  const write = h.sink.batchWrite.bind(h.sink);
  h.sink.batchWrite = (m, o) => {
    timeouts.push(o.timeoutMs);
    return write(m, o);
  };
  for (let i = 0; i < 5; i++) h.sink.inject({ kind: 'status', positions: [0], code: 14 });
  const start = h.clock.now;
  const a = await h.writer.handle(body(upsert(1)));
  expect(a.status).toBe(503);
  // Attempts at 0 s, 15 s and 30 s; the backoffs end at the deadline, and no attempt starts at 40 s.
  expect(timeouts).toEqual([30_000, 25_000, 10_000]);
  expect(h.sleeps).toEqual([15_000, 15_000, 10_000]);
  expect(h.clock.now - start).toBe(40_000);
  expect(a.body.failures).toEqual([
    expect.objectContaining({ reason: 'request-deadline', status: 'UNAVAILABLE', attempts: 3 }),
  ]);
});

test('the request deadline bounds a round of more batches than the concurrency: later waves are not sent', async () => {
  const h = fortySecondDeadline({ SLUICE_WRITER_MAX_BATCH_MUTATIONS: '1', SLUICE_WRITER_CONCURRENCY: '1' });
  // Every call hangs until its timeout (the fake clock moves by it) and reports nothing.
  const timeouts: number[] = [];
  h.sink.batchWrite = async (_m, o) => {
    timeouts.push(o.timeoutMs);
    h.clock.now += o.timeoutMs;
    return { reports: [], callError: { code: 4, message: 'hung' } };
  };
  const start = h.clock.now;
  const a = await h.writer.handle(body(upsert(1), upsert(2), upsert(3), upsert(4)));
  expect(h.clock.now - start).toBeLessThanOrEqual(40_000);
  expect(timeouts).toEqual([30_000, 10_000]);
  expect(a.status).toBe(503);
  expect(a.body).toMatchObject({ mutations: 4, unapplied: 4, batches: 2 });
  expect(a.body.failures).toEqual([
    expect.objectContaining({
      index: 0,
      reason: 'request-deadline',
      status: 'DEADLINE_EXCEEDED',
      attempts: 1,
    }),
    expect.objectContaining({
      index: 1,
      reason: 'request-deadline',
      status: 'DEADLINE_EXCEEDED',
      attempts: 1,
    }),
    expect.objectContaining({ index: 2, reason: 'request-deadline', attempts: 0 }),
    expect.objectContaining({ index: 3, reason: 'request-deadline', attempts: 0 }),
  ]);
});

test('a batch call that throws fails its own groups; the other batches keep their results and dead letters', async () => {
  const h = harness({ SLUICE_WRITER_MAX_BATCH_MUTATIONS: '1', SLUICE_WRITER_CONCURRENCY: '1' });
  await h.writer.handle(body(insert(1)));
  const write = h.sink.batchWrite.bind(h.sink);
  h.sink.batchWrite = (m, o) => {
    if (m[0]?.index === 1) throw new TypeError('cannot convert the value');
    return write(m, o);
  };
  const a = await h.writer.handle(body(insert(1), upsert(2), upsert(3)));
  expect(a.status).toBe(500);
  expect(a.body).toMatchObject({ applied: 1, routed: 1, failed: 1, unapplied: 0 });
  expect(a.body.failures).toEqual([
    expect.objectContaining({
      index: 1,
      reason: 'other',
      status: 'INTERNAL',
      message: expect.stringMatching(/BatchWrite could not be sent: cannot convert the value/),
    }),
  ]);
  expect(a.body.deadLetter).toEqual(expect.stringMatching(/^gs:\/\/acme-ledger\//));
  expect((await h.store.list('')).items).toHaveLength(1);
  expect(names(h)).toEqual(['n1', 'n3']);
});
