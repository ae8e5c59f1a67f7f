/** Answers, dead letters and the writer's configuration. */
import { ConfigError } from '../../../../shared/domain/config';
import { fromNanos } from '../../../../shared/domain/timestamp';
import { parseWriterConfig } from '../../../../shared/domain/writer/config';
import { deadLetterDocument, deadLetterName } from '../../../../shared/domain/writer/dead-letter';
import {
  answerFor,
  badRequest,
  type RequestMetrics,
  type ResultEntry,
  tally,
} from '../../../../shared/domain/writer/outcome';

const metrics = (entries: ResultEntry[]): RequestMetrics => ({
  mutations: entries.length,
  ...tally(entries),
  mutationsRetried: 0,
  transientErrors: 0,
  batches: 1,
  attempts: 1,
  bufferedCells: 3,
  bufferedBytes: 30,
  groupsRouted: entries.filter((e) => e.result.kind === 'routed').length,
  flushes: { cells: 0, mutations: 0, bytes: 0, end: 1 },
});
const entry = (index: number, result: ResultEntry['result']): ResultEntry => ({
  index,
  table: 'T',
  op: 'insert',
  attempts: 1,
  result,
});
const applied = (i: number) => entry(i, { kind: 'applied' });
const routed = (i: number) =>
  entry(i, { kind: 'routed', status: { code: 6, message: 'exists' }, reason: 'already-exists' });
const unapplied = (i: number, code = 14) =>
  entry(i, { kind: 'unapplied', reason: 'retries-exhausted', status: { code, message: 'busy' } });
const failed = (i: number, reason: 'constraint-violation' | 'failed-precondition' | 'not-found') =>
  entry(i, { kind: 'failed', status: { code: reason === 'not-found' ? 5 : 9, message: 'no' }, reason });

test('200 when every mutation is applied or routed, with the counts and metrics', () => {
  const entries = [applied(0), routed(1), applied(2)];
  const a = answerFor(entries, metrics(entries), 'gs://b/dl/x.json');
  expect(a.status).toBe(200);
  expect(a.body).toMatchObject({
    applied: 2,
    routed: 1,
    failed: 0,
    unapplied: 0,
    groupsRouted: 1,
    deadLetter: 'gs://b/dl/x.json',
  });
  expect(a.body.routedMutations).toEqual([
    {
      index: 1,
      table: 'T',
      op: 'insert',
      attempts: 1,
      reason: 'already-exists',
      code: 6,
      status: 'ALREADY_EXISTS',
      message: 'exists',
    },
  ]);
  expect(a.body.failures).toBeUndefined();
});

test('503 when transient failures remain, 429 when Spanner asked to slow down; failures take precedence', () => {
  const a = [applied(0), unapplied(1)];
  expect(answerFor(a, metrics(a)).status).toBe(503);
  const b = [unapplied(0, 8), unapplied(1)];
  expect(answerFor(b, metrics(b)).status).toBe(429);
  const c = [unapplied(0), failed(1, 'constraint-violation'), failed(2, 'not-found')];
  const answer = answerFor(c, metrics(c));
  expect(answer.status).toBe(422);
  expect((answer.body.failures as Array<{ index: number }>).map((f) => f.index)).toEqual([0, 1, 2]);
  const d = [failed(0, 'failed-precondition'), failed(1, 'constraint-violation')];
  expect(answerFor(d, metrics(d)).status).toBe(500);
});

test('400 names every problem', () => {
  expect(badRequest(['a: x', 'b: y'])).toEqual({
    status: 400,
    body: { error: { code: 400, message: '2 problems: a: x; b: y', problems: ['a: x', 'b: y'] } },
  });
  expect(badRequest(['a: x']).body.error).toMatchObject({ message: 'a: x' });
});

test('a dead letter names the request and time, and carries each mutation as sent with its status', () => {
  const origin = {
    requestId: 'r1',
    receivedAt: fromNanos(1_704_067_200_123_456_789n),
    pubsub: { messageId: 'm9' },
  };
  expect(deadLetterName('sluice/dead-letters/', origin)).toBe(
    'sluice/dead-letters/2024/01/01/000000.123456789Z-r1.json',
  );
  const doc = JSON.parse(
    deadLetterDocument(origin, [
      {
        mutation: { index: 4, op: 'insert', table: 'T', row: { Id: '1' } },
        status: { code: 6, message: 'exists' },
        reason: 'already-exists',
        attempts: 2,
      },
    ]).toString(),
  );
  expect(doc).toEqual({
    kind: 'sluice.writer.dead-letter',
    requestId: 'r1',
    receivedAt: '2024-01-01T00:00:00.123456789Z',
    pubsub: { messageId: 'm9' },
    entries: [
      {
        index: 4,
        mutation: { op: 'insert', table: 'T', row: { Id: '1' } },
        status: { code: 6, name: 'ALREADY_EXISTS', message: 'exists' },
        reason: 'already-exists',
        attempts: 2,
      },
    ],
  });
});

const BASE = {
  SLUICE_PROJECT: 'acme-prod',
  SLUICE_SPANNER_INSTANCE: 'main',
  SLUICE_SPANNER_DATABASE: 'orders',
  SLUICE_LEDGER_BUCKET: 'acme-ledger',
};

test('configuration: defaults, the dead-letter bucket from the ledger bucket, overrides', () => {
  const c = parseWriterConfig(BASE);
  expect(c).toMatchObject({
    deadLetters: { bucket: 'acme-ledger', prefix: 'writer-dead-letters/sluice/' },
    limits: { maxCells: 5000, maxMutations: 500, maxBytes: 1_048_576 },
    retry: { maxAttempts: 10, batchWriteTimeoutMs: 30_000, backoffInitialMs: 500, backoffMaxMs: 10_000 },
    requestDeadlineMs: 400_000,
    constraintViolationPolicy: 'fail',
    ordering: 'none',
  });
  const o = parseWriterConfig({
    ...BASE,
    SLUICE_WRITER_DEAD_LETTER_BUCKET: 'dl-bucket',
    SLUICE_WRITER_MAX_BATCH_CELLS: '100',
    SLUICE_WRITER_ORDERING: 'per-key',
    SLUICE_WRITER_CONSTRAINT_VIOLATION_POLICY: 'route-to-failure-handler',
  });
  expect(o).toMatchObject({
    deadLetters: { bucket: 'dl-bucket' },
    limits: { maxCells: 100 },
    ordering: 'per-key',
    constraintViolationPolicy: 'route-to-failure-handler',
  });
});

test('configuration: every bad variable named at once', () => {
  const bad = () =>
    parseWriterConfig({
      SLUICE_PROJECT: 'x',
      SLUICE_SPANNER_INSTANCE: 'main',
      SLUICE_WRITER_MAX_BATCH_CELLS: '0',
      SLUICE_WRITER_ORDERING: 'strict',
    });
  expect(bad).toThrow(ConfigError);
  try {
    bad();
  } catch (e) {
    expect((e as ConfigError).issues.map((i) => i.path).sort()).toEqual([
      'SLUICE_PROJECT',
      'SLUICE_SPANNER_DATABASE',
      'SLUICE_WRITER_MAX_BATCH_CELLS',
      'SLUICE_WRITER_ORDERING',
    ]);
  }
  const { SLUICE_LEDGER_BUCKET: _, ...noBucket } = BASE;
  expect(() => parseWriterConfig(noBucket)).toThrow(/SLUICE_WRITER_DEAD_LETTER_BUCKET: is required/);
  expect(() => parseWriterConfig({ ...BASE, SLUICE_WRITER_REQUEST_DEADLINE_MS: '5000' })).toThrow(
    /SLUICE_WRITER_REQUEST_DEADLINE_MS: must be at least/,
  );
  expect(() => parseWriterConfig({ ...BASE, SLUICE_WRITER_BACKOFF_MAX_MS: '100' })).toThrow(
    /SLUICE_WRITER_BACKOFF_MAX_MS/,
  );
});

test('the writer refuses a dead-letter prefix in the ledger bucket overlapping the ledger paths, and defaults outside them', () => {
  const env = {
    SLUICE_PROJECT: 'acme-prod',
    SLUICE_SPANNER_INSTANCE: 'main',
    SLUICE_SPANNER_DATABASE: 'orders',
    SLUICE_LEDGER_BUCKET: 'acme-ledger',
  };
  expect(parseWriterConfig(env).deadLetters).toEqual({
    bucket: 'acme-ledger',
    prefix: 'writer-dead-letters/sluice/',
  });
  expect(() =>
    parseWriterConfig({ ...env, SLUICE_WRITER_DEAD_LETTER_PREFIX: 'sluice/dead-letters/' }),
  ).toThrow(/SLUICE_WRITER_DEAD_LETTER_PREFIX.*must not overlap the ledger's paths/s);
  // In a bucket of its own the prefix is the writer's alone.
  const own = {
    ...env,
    SLUICE_WRITER_DEAD_LETTER_BUCKET: 'acme-writer',
    SLUICE_WRITER_DEAD_LETTER_PREFIX: 'sluice/',
  };
  expect(parseWriterConfig(own).deadLetters.prefix).toBe('sluice/');
});
