/**
 * Error classification: the one place that decides, from gRPC codes and HTTP statuses, whether a failure is
 * worth retrying. Every adapter turns a client error into a {@link SluiceError} through {@link classifyError};
 * every function maps the kind to its HTTP answer through {@link httpStatusFor}.
 */
import { isMarked, markedMessage, plain } from './log-values';

/**
 * - `retryable`: transient service state; the same request may succeed later (Cloud Tasks retries with backoff).
 * - `permanent`: this input will never succeed as it is (a value that cannot be decoded or mapped, a schema
 *   that refuses it, a missing resource); record it and stop until an operator changes something.
 * - `bug`: a programming error (`TypeError`, `RangeError`, …): retrying the same code cannot help; it is
 *   recorded like a permanent failure, with the stack in the log, until a fixed version is deployed.
 * - `conflict`: another writer got there first (lost compare-and-swap, name already taken); re-read and
 *   re-decide — often this means the work is already done.
 * - `invalid-input`: the request or configuration itself is wrong.
 */
export type ErrorKind = 'retryable' | 'permanent' | 'bug' | 'conflict' | 'invalid-input';

/** Every {@link ErrorKind}, for schemas that read one back. */
export const ERROR_KINDS: readonly ErrorKind[] = [
  'retryable',
  'permanent',
  'bug',
  'conflict',
  'invalid-input',
];

/** True for the kinds that stop the work for good (nothing but a change by an operator makes it succeed). */
export function isFatal(kind: ErrorKind): boolean {
  return kind === 'permanent' || kind === 'bug' || kind === 'invalid-input';
}

/** gRPC status codes by name (google.rpc.Code). */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

/** A gRPC status name, e.g. `ALREADY_EXISTS`. */
export type GrpcCodeName = keyof typeof GrpcCode;

/**
 * What was being attempted, where the same code means different things:
 * - `append-with-offset`: a BigQuery Storage Write append carrying an offset. `ALREADY_EXISTS` means the rows
 *   at that offset are already written (treat as done) and `OUT_OF_RANGE` means an earlier append failed and
 *   the writer must resynchronise its offset — both are `conflict`, not failures of the data.
 */
export type Operation = 'append-with-offset';

const GRPC_KIND: Record<number, ErrorKind> = {
  [GrpcCode.CANCELLED]: 'retryable',
  // The BigQuery write connection reports idle timeouts as `2 UNKNOWN: 408:Request Timeout`.
  [GrpcCode.UNKNOWN]: 'retryable',
  [GrpcCode.INVALID_ARGUMENT]: 'invalid-input',
  [GrpcCode.DEADLINE_EXCEEDED]: 'retryable',
  // A dropped stream, a missing table or database: nothing changes by retrying.
  [GrpcCode.NOT_FOUND]: 'permanent',
  // Named task de-duplication, create-only writes: someone (maybe our earlier attempt) already did it.
  [GrpcCode.ALREADY_EXISTS]: 'conflict',
  [GrpcCode.PERMISSION_DENIED]: 'permanent',
  [GrpcCode.RESOURCE_EXHAUSTED]: 'retryable',
  [GrpcCode.FAILED_PRECONDITION]: 'permanent',
  // Spanner aborts read-write transactions on contention; the whole transaction is retried.
  [GrpcCode.ABORTED]: 'retryable',
  // A change-stream start older than the retention period (or outside the token's range): needs the
  // configured retention fallback, never a blind retry.
  [GrpcCode.OUT_OF_RANGE]: 'permanent',
  [GrpcCode.UNIMPLEMENTED]: 'permanent',
  [GrpcCode.INTERNAL]: 'retryable',
  [GrpcCode.UNAVAILABLE]: 'retryable',
  [GrpcCode.DATA_LOSS]: 'permanent',
  [GrpcCode.UNAUTHENTICATED]: 'permanent',
};

/** Classifies a numeric gRPC status code. Unknown numbers (and `OK`, which is no error) are `permanent`. */
export function classifyGrpcCode(code: number, operation?: Operation): ErrorKind {
  if (operation === 'append-with-offset') {
    if (code === GrpcCode.ALREADY_EXISTS || code === GrpcCode.OUT_OF_RANGE) return 'conflict';
  }
  return GRPC_KIND[code] ?? 'permanent';
}

/** Classifies an HTTP status of a failed response (GCS JSON API, BigQuery REST, any HTTP target). */
export function classifyHttpStatus(status: number): ErrorKind {
  if (status === 408 || status === 429 || status === 499 || status >= 500) return 'retryable';
  // 409: resource exists / concurrent change; 412: `ifGenerationMatch` lost (or our own retried write won).
  if (status === 409 || status === 412) return 'conflict';
  if (status === 400 || status === 413 || status === 414 || status === 422) return 'invalid-input';
  return 'permanent';
}

/** True when the failure asks the caller to slow down (HTTP 429, gRPC RESOURCE_EXHAUSTED, GCS rate reasons). */
export function isRateLimited(err: unknown): boolean {
  if (err instanceof SluiceError) return err.rateLimited;
  const { grpc, http, reasons } = readCodes(err);
  return grpc === GrpcCode.RESOURCE_EXHAUSTED || http === 429 || reasons.some((r) => RATE_REASONS.has(r));
}

const RATE_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded']);

const RETRYABLE_SYSTEM_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
]);

/**
 * Programming errors, and data the pipeline cannot decode (`DecodeError`: a record or value of a shape or
 * type it does not know — the same record decodes the same way on every retry): retrying cannot fix them.
 */
const BUG_ERRORS = ['TypeError', 'RangeError', 'ReferenceError', 'SyntaxError', 'DecodeError'];

interface Codes {
  grpc?: number;
  http?: number;
  system?: string;
  reasons: string[];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** Reads the codes a Google client error carries, whatever its shape. */
function readCodes(err: unknown): Codes {
  const codes: Codes = { reasons: [] };
  if (!isObject(err)) return codes;
  const { code, status, response, errors } = err;
  if (typeof code === 'number') {
    // gRPC codes are 0..16; GCS `ApiError.code` and gaxios errors carry the HTTP status in `code`.
    if (Number.isInteger(code) && code >= 0 && code <= 16) codes.grpc = code;
    else if (code >= 100 && code <= 599) codes.http = code;
  } else if (typeof code === 'string') {
    if (code in GrpcCode) codes.grpc = GrpcCode[code as GrpcCodeName];
    else if (/^\d{3}$/.test(code)) codes.http = Number(code);
    else codes.system = code;
  }
  if (codes.http === undefined && typeof status === 'number' && status >= 100 && status <= 599) {
    codes.http = status;
  }
  if (codes.http === undefined && isObject(response) && typeof response.status === 'number') {
    codes.http = response.status;
  }
  if (Array.isArray(errors)) {
    for (const e of errors) if (isObject(e) && typeof e.reason === 'string') codes.reasons.push(e.reason);
  }
  return codes;
}

/**
 * Classifies anything thrown: a {@link SluiceError} keeps its kind; otherwise gRPC codes (numeric or by name),
 * HTTP statuses (`.code` of GCS `ApiError`, `.status` / `.response.status` of gaxios errors) and Node system
 * error codes decide. Programming errors (`TypeError`, …) are `bug`. Any other error carrying no code at all
 * is `retryable` — a retry never loses data — and the reader shows every partition that keeps failing in the
 * status (ADR-1501).
 */
export function classifyError(err: unknown, operation?: Operation): ErrorKind {
  if (err instanceof SluiceError) return err.kind;
  const { grpc, http, system, reasons } = readCodes(err);
  if (grpc !== undefined) return classifyGrpcCode(grpc, operation);
  if (http !== undefined) {
    // GCS answers some rate limits with 403 and a rate reason rather than 429.
    if (reasons.some((r) => RATE_REASONS.has(r))) return 'retryable';
    return classifyHttpStatus(http);
  }
  if (system !== undefined) return RETRYABLE_SYSTEM_CODES.has(system) ? 'retryable' : 'permanent';
  if (err instanceof Error && BUG_ERRORS.includes(err.name)) return 'bug';
  return 'retryable';
}

/** An error with a decided {@link ErrorKind}; `cause` keeps the original client error. */
export class SluiceError extends Error {
  override readonly name: string = 'SluiceError';
  readonly kind: ErrorKind;
  /** The backend asked us to slow down; answer 429 so Cloud Tasks backs off harder. */
  readonly rateLimited: boolean;

  /**
   * The message with its row values and keys marked (log-values.ts), when it quotes any: what a log line
   * redacts. `message` itself is plain, for every other reader (answers, the ledger, dead letters).
   */
  declare readonly markedMessage?: string;

  constructor(kind: ErrorKind, message: string, options: { cause?: unknown; rateLimited?: boolean } = {}) {
    super(plain(message), options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.rateLimited = options.rateLimited ?? false;
    // Not enumerable: equality of errors in tests and JSON of an error stay as they were.
    if (isMarked(message)) Object.defineProperty(this, 'markedMessage', { value: message });
  }

  /** Wraps anything thrown, classifying it once; a `SluiceError` is returned unchanged. */
  static from(err: unknown, context?: string, operation?: Operation): SluiceError {
    if (err instanceof SluiceError) return err;
    const detail = markedMessage(err);
    const message = context ? `${context}: ${detail}` : detail;
    return new SluiceError(classifyError(err, operation), message, {
      cause: err,
      rateLimited: isRateLimited(err),
    });
  }
}

/** Who receives the answer: Cloud Tasks (retries every non-2xx) or an operator calling the HTTP API. */
export type Audience = 'cloud-tasks' | 'operator';

/**
 * The HTTP status a function answers for a failure of this kind.
 *
 * To Cloud Tasks every non-2xx means "retry", so only `retryable` gets one (503, or 429 when rate-limited,
 * which makes the queue back off harder); a permanent or invalid task and a lost race (the winner carries the
 * work on) are recorded and answered 200 so the queue drops the task. To an operator the usual REST statuses
 * apply.
 */
export function httpStatusFor(
  kind: ErrorKind,
  options: { rateLimited?: boolean; audience?: Audience } = {},
): number {
  if (kind === 'retryable') return options.rateLimited ? 429 : 503;
  if ((options.audience ?? 'cloud-tasks') === 'cloud-tasks') return 200;
  switch (kind) {
    case 'invalid-input':
      return 400;
    case 'conflict':
      return 409;
    case 'permanent':
    case 'bug':
      return 500;
  }
}
