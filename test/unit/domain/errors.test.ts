import {
  classifyError,
  classifyGrpcCode,
  classifyHttpStatus,
  GrpcCode,
  httpStatusFor,
  isRateLimited,
  SluiceError,
} from '../../../shared/domain/errors';

describe('classifyGrpcCode', () => {
  it.each([
    ['CANCELLED', 'retryable'],
    ['UNKNOWN', 'retryable'],
    ['INVALID_ARGUMENT', 'invalid-input'],
    ['DEADLINE_EXCEEDED', 'retryable'],
    ['NOT_FOUND', 'permanent'],
    ['ALREADY_EXISTS', 'conflict'],
    ['PERMISSION_DENIED', 'permanent'],
    ['RESOURCE_EXHAUSTED', 'retryable'],
    ['FAILED_PRECONDITION', 'permanent'],
    ['ABORTED', 'retryable'],
    ['OUT_OF_RANGE', 'permanent'],
    ['UNIMPLEMENTED', 'permanent'],
    ['INTERNAL', 'retryable'],
    ['UNAVAILABLE', 'retryable'],
    ['DATA_LOSS', 'permanent'],
    ['UNAUTHENTICATED', 'permanent'],
    ['OK', 'permanent'],
  ] as const)('%s is %s', (name, kind) => {
    expect(classifyGrpcCode(GrpcCode[name])).toBe(kind);
  });

  it('treats offset errors of a BigQuery append as conflicts (already written / resync), not failures', () => {
    expect(classifyGrpcCode(6, 'append-with-offset')).toBe('conflict');
    expect(classifyGrpcCode(11, 'append-with-offset')).toBe('conflict');
    expect(classifyGrpcCode(14, 'append-with-offset')).toBe('retryable');
    expect(classifyGrpcCode(99)).toBe('permanent');
  });
});

describe('classifyHttpStatus', () => {
  it.each([
    [400, 'invalid-input'],
    [401, 'permanent'],
    [403, 'permanent'],
    [404, 'permanent'],
    [408, 'retryable'],
    [409, 'conflict'],
    [412, 'conflict'],
    [413, 'invalid-input'],
    [429, 'retryable'],
    [500, 'retryable'],
    [502, 'retryable'],
    [503, 'retryable'],
    [504, 'retryable'],
  ] as const)('%i is %s', (status, kind) => {
    expect(classifyHttpStatus(status)).toBe(kind);
  });
});

describe('classifyError', () => {
  it('reads gRPC codes from client errors, numeric or by name', () => {
    expect(classifyError(Object.assign(new Error('6 ALREADY_EXISTS: task exists'), { code: 6 }))).toBe(
      'conflict',
    );
    expect(classifyError({ code: 'UNAVAILABLE' })).toBe('retryable');
    expect(classifyError({ code: 11 }, 'append-with-offset')).toBe('conflict');
  });

  it('reads HTTP statuses from GCS ApiError (.code), gaxios (.status, .response.status)', () => {
    expect(classifyError(Object.assign(new Error('conditionNotMet'), { code: 412 }))).toBe('conflict');
    expect(classifyError({ status: 503 })).toBe('retryable');
    expect(classifyError({ response: { status: 404 } })).toBe('permanent');
    expect(classifyError({ code: '429' })).toBe('retryable');
  });

  it('treats GCS rate-limit reasons on 403 as retryable and rate-limited', () => {
    const err = { code: 403, errors: [{ reason: 'rateLimitExceeded' }, 'junk'] };
    expect(classifyError(err)).toBe('retryable');
    expect(isRateLimited(err)).toBe(true);
    expect(isRateLimited({ code: 8 })).toBe(true);
    expect(isRateLimited({ code: 429 })).toBe(true);
    expect(isRateLimited({ code: 503 })).toBe(false);
    expect(classifyError({ code: 403, errors: [{ reason: 'forbidden' }] })).toBe('permanent');
  });

  it('classifies network errors as retryable and programming errors as bugs', () => {
    expect(classifyError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).toBe(
      'retryable',
    );
    expect(classifyError({ code: 'ERR_SOMETHING' })).toBe('permanent');
    expect(classifyError(new TypeError('x is undefined'))).toBe('bug');
    expect(classifyError(new Error('no code at all'))).toBe('retryable');
    expect(classifyError('a string')).toBe('retryable');
    expect(classifyError({ code: 1000 })).toBe('retryable');
  });

  it('keeps the kind of a SluiceError', () => {
    expect(classifyError(new SluiceError('invalid-input', 'bad'))).toBe('invalid-input');
  });
});

describe('SluiceError', () => {
  it('wraps a client error once, keeping the cause and rate limiting', () => {
    const cause = Object.assign(new Error('quota'), { code: 8 });
    const err = SluiceError.from(cause, 'creating task');
    expect(err).toMatchObject({ kind: 'retryable', rateLimited: true, message: 'creating task: quota' });
    expect(err.cause).toBe(cause);
    expect(SluiceError.from(err)).toBe(err);
    expect(SluiceError.from('boom').message).toBe('boom');
    expect(isRateLimited(err)).toBe(true);
    expect(new SluiceError('permanent', 'x').cause).toBeUndefined();
  });
});

describe('httpStatusFor', () => {
  it('answers Cloud Tasks 503/429 to retry and 200 for everything retrying cannot fix', () => {
    expect(httpStatusFor('retryable')).toBe(503);
    expect(httpStatusFor('retryable', { rateLimited: true })).toBe(429);
    expect(httpStatusFor('permanent')).toBe(200);
    expect(httpStatusFor('invalid-input')).toBe(200);
    expect(httpStatusFor('conflict')).toBe(200);
  });

  it('answers operators with REST statuses', () => {
    const operator = { audience: 'operator' as const };
    expect(httpStatusFor('invalid-input', operator)).toBe(400);
    expect(httpStatusFor('conflict', operator)).toBe(409);
    expect(httpStatusFor('permanent', operator)).toBe(500);
    expect(httpStatusFor('retryable', operator)).toBe(503);
  });
});
