/** Batching by the three limits, the retry decision and worst case, and the failure-handler routing policy. */
import { GrpcCode } from '../../../../shared/domain/errors';
import { DEFAULT_BATCH_LIMITS, limitWarnings, toBatches } from '../../../../shared/domain/writer/batching';
import type { TypedMutation } from '../../../../shared/domain/writer/mutations';
import {
  attemptTimeoutMs,
  backoffMs,
  classifyCallFailure,
  classifyGroupStatus,
  DEFAULT_RETRY,
  isConstraintViolation,
  isSchemaMiss,
  worstCase,
} from '../../../../shared/domain/writer/policy';

const m = (index: number, cells: number, bytes = 10): TypedMutation => ({
  index,
  op: 'insert',
  table: 'T',
  columns: [],
  values: [],
  types: [],
  rowKey: `T [${index}]`,
  cells,
  bytes,
});

test('batches close at whichever limit the next mutation would pass, and say which', () => {
  const limits = { maxCells: 100, maxMutations: 10, maxBytes: 1000 };
  const byCells = toBatches(
    Array.from({ length: 30 }, (_, i) => m(i, 7)),
    limits,
  );
  expect(byCells.map((b) => [b.mutations.length, b.cells, b.reason])).toEqual([
    [10, 70, 'mutations'],
    [10, 70, 'mutations'],
    [10, 70, 'end'],
  ]);
  const heavy = toBatches(
    Array.from({ length: 30 }, (_, i) => m(i, 15)),
    limits,
  );
  expect(heavy.map((b) => [b.mutations.length, b.reason])).toEqual([
    [6, 'cells'],
    [6, 'cells'],
    [6, 'cells'],
    [6, 'cells'],
    [6, 'end'],
  ]);
  const big = toBatches([m(0, 1, 600), m(1, 1, 600), m(2, 1, 5000), m(3, 1, 1)], limits);
  expect(big.map((b) => [b.mutations.map((x) => x.index), b.reason])).toEqual([
    [[0], 'bytes'],
    [[1], 'bytes'],
    [[2], 'bytes'],
    [[3], 'end'],
  ]);
  expect(toBatches([], limits)).toEqual([]);
});

test('a limit another makes unreachable, or one above the service limits, is named with both values', () => {
  expect(limitWarnings(DEFAULT_BATCH_LIMITS)).toEqual([]);
  expect(limitWarnings({ maxCells: 400, maxMutations: 500, maxBytes: 1 << 20 })).toEqual([
    'maxBatchMutations (500) can never be reached: every mutation costs at least one cell and maxBatchCells is 400',
  ]);
  expect(limitWarnings({ maxCells: 90_000, maxMutations: 10, maxBytes: 200 * 1024 * 1024 })).toHaveLength(2);
});

test('the four transient codes are retried; a call failure retries only when transient', () => {
  for (const code of [
    GrpcCode.ABORTED,
    GrpcCode.UNAVAILABLE,
    GrpcCode.DEADLINE_EXCEEDED,
    GrpcCode.RESOURCE_EXHAUSTED,
  ])
    expect(classifyGroupStatus({ code, message: '' }, 'fail').kind).toBe('transient');
  expect(classifyGroupStatus({ code: GrpcCode.OK, message: '' }, 'fail')).toEqual({ kind: 'applied' });
  expect(classifyCallFailure({ code: GrpcCode.UNAVAILABLE, message: 'x' }).kind).toBe('transient');
  expect(
    classifyCallFailure({ code: GrpcCode.INVALID_ARGUMENT, message: 'too many mutations' }),
  ).toMatchObject({ kind: 'failed', reason: 'request-rejected' });
  expect(classifyGroupStatus({ code: GrpcCode.INTERNAL, message: 'x' }, 'fail')).toMatchObject({
    kind: 'failed',
    reason: 'other',
  });
});

test('a request too large to be received is permanent, whatever code carries it', () => {
  const service = {
    code: GrpcCode.INVALID_ARGUMENT,
    message: 'Request payload size exceeds the limit: 104857600 bytes.',
  };
  // gRPC's own receive limit (the official emulator's is 100 MiB, a default server's 4 MiB) says
  // RESOURCE_EXHAUSTED, which would otherwise be retried: resending the same bytes cannot succeed.
  const grpc = {
    code: GrpcCode.RESOURCE_EXHAUSTED,
    message: 'Received message larger than max (5242684 vs 4194304)',
  };
  for (const status of [service, grpc])
    expect(classifyCallFailure(status)).toEqual({ kind: 'failed', reason: 'request-rejected', status });
  expect(classifyCallFailure({ code: GrpcCode.RESOURCE_EXHAUSTED, message: 'Quota exceeded' }).kind).toBe(
    'transient',
  );
});

const MESSAGES = {
  notNull: 'Cannot specify a null value for column: T.C in table: T',
  missing: 'A new row in table T does not specify a non-null value for NOT NULL column: C',
  length: 'New value exceeds the maximum size limit for this column: T.C, size: 11, limit: 10.',
  fk: 'Foreign key `FK` constraint violation on table `T`. Cannot find referenced key `{Int64(1)}` in table `P`.',
  fkService:
    'Foreign key constraint `FK_T_P` is violated on table `T`. Cannot find referenced values in P(Id).',
};

test('routing: ALREADY_EXISTS and INVALID_ARGUMENT go to the failure handler; schema violations fail unless opted in', () => {
  expect(classifyGroupStatus({ code: GrpcCode.ALREADY_EXISTS, message: 'Row exists' }, 'fail')).toMatchObject(
    { kind: 'routed', reason: 'already-exists' },
  );
  expect(classifyGroupStatus({ code: GrpcCode.INVALID_ARGUMENT, message: 'bad' }, 'fail')).toMatchObject({
    kind: 'routed',
    reason: 'invalid-argument',
  });
  for (const message of Object.values(MESSAGES)) {
    const s = { code: GrpcCode.FAILED_PRECONDITION, message };
    expect(isConstraintViolation(s)).toBe(true);
    expect(classifyGroupStatus(s, 'fail')).toMatchObject({ kind: 'failed', reason: 'constraint-violation' });
    expect(classifyGroupStatus(s, 'route-to-failure-handler')).toMatchObject({
      kind: 'routed',
      reason: 'constraint-violation',
    });
  }
  const check = {
    code: GrpcCode.OUT_OF_RANGE,
    message: 'Check constraint `T`.`CK` is violated for key {Int64(1)}',
  };
  expect(classifyGroupStatus(check, 'route-to-failure-handler')).toMatchObject({
    kind: 'routed',
    reason: 'constraint-violation',
  });
  expect(classifyGroupStatus(check, 'fail')).toMatchObject({ kind: 'failed' });
});

test('never routed: FAILED_PRECONDITION from system state, and NOT_FOUND, whatever the policy', () => {
  const cmek = { code: GrpcCode.FAILED_PRECONDITION, message: 'The KMS key is disabled' };
  const missing = { code: GrpcCode.NOT_FOUND, message: 'Table T: Row {Int64(1)} not found.' };
  for (const policy of ['fail', 'route-to-failure-handler'] as const) {
    expect(classifyGroupStatus(cmek, policy)).toMatchObject({
      kind: 'failed',
      reason: 'failed-precondition',
    });
    expect(classifyGroupStatus(missing, policy)).toMatchObject({ kind: 'failed', reason: 'not-found' });
  }
  expect(isSchemaMiss({ code: GrpcCode.NOT_FOUND, message: 'Table not found: T' })).toBe(true);
  expect(isSchemaMiss({ code: GrpcCode.NOT_FOUND, message: 'Column not found in table T: C' })).toBe(true);
  expect(isSchemaMiss(missing)).toBe(false);
});

test('backoff doubles to its cap, jittered down to half; the worst case with the defaults is 355.5 s', () => {
  expect([1, 2, 3, 4, 5, 6, 9].map((n) => backoffMs(n, DEFAULT_RETRY, () => 1))).toEqual([
    500, 1000, 2000, 4000, 8000, 10_000, 10_000,
  ]);
  expect(backoffMs(1, DEFAULT_RETRY, () => 0)).toBe(250);
  expect(worstCase(DEFAULT_RETRY)).toEqual({ attemptsMs: 300_000, backoffMs: 55_500, totalMs: 355_500 });
  expect(worstCase({ ...DEFAULT_RETRY, maxAttempts: 1 })).toEqual({
    attemptsMs: 30_000,
    backoffMs: 0,
    totalMs: 30_000,
  });
});

test('an attempt is cut to the time left before the request deadline; none starts with less than a second', () => {
  expect(attemptTimeoutMs(400_000, DEFAULT_RETRY)).toBe(30_000);
  expect(attemptTimeoutMs(12_345, DEFAULT_RETRY)).toBe(12_345);
  expect(attemptTimeoutMs(1_000, DEFAULT_RETRY)).toBe(1_000);
  expect(attemptTimeoutMs(999, DEFAULT_RETRY)).toBeUndefined();
  expect(attemptTimeoutMs(0, DEFAULT_RETRY)).toBeUndefined();
  expect(attemptTimeoutMs(-5, DEFAULT_RETRY)).toBeUndefined();
});
