/**
 * In-band AppendRows failures as errors. The managed writer resolves (not rejects) a write whose response
 * carries a non-retryable status or row errors, so the adapter turns those into errors carrying the gRPC
 * `code` the service sent, for the application's classification (`classifyError`).
 */
import type { protos } from '@google-cloud/bigquery-storage';

type AppendRowsResponse = protos.google.cloud.bigquery.storage.v1.IAppendRowsResponse;

/** One rejected row of an append: its index in the request and why. */
export interface RowError {
  index: number;
  message: string;
}

/** An AppendRows request BigQuery answered with an error status; nothing of the request was written. */
export class AppendRowsError extends Error {
  override readonly name = 'AppendRowsError';
  constructor(
    message: string,
    /** gRPC status code sent by BigQuery (3 = INVALID_ARGUMENT for row errors). */
    readonly code: number,
    readonly rowErrors: RowError[] = [],
  ) {
    super(message);
  }
}

const INVALID_ARGUMENT = 3;
const DEADLINE_EXCEEDED = 4;

/**
 * The error an acknowledgement carries, or undefined when every row was accepted. `offset`: the request's
 * first row's index among the rows of the whole write, so row errors name those.
 */
export function appendFailure(response: AppendRowsResponse, offset = 0): AppendRowsError | undefined {
  const rowErrors = (response.rowErrors ?? []).map((r) => ({
    index: Number(r.index ?? 0) + offset,
    message: r.message ?? '',
  }));
  const status = response.error;
  if (status && (status.code ?? 0) !== 0) {
    const detail =
      rowErrors.length > 0 ? `: ${rowErrors.map((r) => `row ${r.index}: ${r.message}`).join('; ')}` : '';
    return new AppendRowsError(`${status.message ?? 'append failed'}${detail}`, status.code ?? 0, rowErrors);
  }
  if (rowErrors.length > 0) {
    return new AppendRowsError(
      `rows rejected: ${rowErrors.map((r) => `row ${r.index}: ${r.message}`).join('; ')}`,
      INVALID_ARGUMENT,
      rowErrors,
    );
  }
  return undefined;
}

/** The error of an acknowledgement that did not arrive in time (retryable: the batch is re-sent). */
export function deadlineExceeded(ms: number): AppendRowsError {
  return new AppendRowsError(`no acknowledgement from BigQuery within ${ms} ms`, DEADLINE_EXCEEDED);
}

/** `result`, or a DEADLINE_EXCEEDED append failure when it has not settled within `ms`. */
export async function withAckDeadline<T>(result: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(deadlineExceeded(ms)), ms);
  });
  try {
    return await Promise.race([result, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
