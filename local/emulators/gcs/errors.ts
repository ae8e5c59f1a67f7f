/**
 * Errors in the JSON API's shape. The Node client reads `body.error` into an `ApiError` whose `code` is the
 * HTTP status, and decides retries by that status, so the status and `reason` must match the real service.
 */
import { jsonErrorBody } from '../common/json-http';

/** `reason` the real service puts in `errors[0].reason` for each status the emulator answers with. */
const REASONS: Record<number, string> = {
  400: 'invalid',
  401: 'required',
  403: 'forbidden',
  404: 'notFound',
  408: 'requestTimeout',
  409: 'conflict',
  412: 'conditionNotMet',
  429: 'rateLimitExceeded',
  500: 'backendError',
  502: 'backendError',
  503: 'backendError',
  504: 'backendError',
};

/** An error answered to the client with the JSON API error body. */
export class GcsError extends Error {
  readonly reason: string;
  /** Answered as a plain-text body, as the service answers some upload errors (not JSON). */
  plainText = false;
  constructor(
    readonly status: number,
    message: string,
    reason?: string,
  ) {
    super(message);
    this.name = 'GcsError';
    this.reason = reason ?? REASONS[status] ?? 'backendError';
  }

  /** The JSON API error body: `{error: {code, message, errors: [{domain, reason, message}]}}`. */
  body(): unknown {
    return jsonErrorBody(this);
  }
}

/** 404 for a missing bucket. */
export function bucketNotFound(bucket: string): GcsError {
  return new GcsError(404, `The specified bucket does not exist: ${bucket}`);
}

/** 404 for a missing object (or object generation). */
export function objectNotFound(bucket: string, name: string): GcsError {
  return new GcsError(404, `No such object: ${bucket}/${name}`);
}

/** 412 with the real service's message. */
export function conditionNotMet(): GcsError {
  return new GcsError(412, 'At least one of the pre-conditions you specified did not hold.');
}

/** 400 for a malformed request. */
export function invalid(message: string): GcsError {
  return new GcsError(400, message);
}
