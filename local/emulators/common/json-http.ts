/**
 * HTTP plumbing shared by the emulators that speak Google's JSON APIs (BigQuery REST, GCS JSON API) and by
 * the admin endpoint: listening on loopback, and the JSON error body the client libraries parse into their
 * `ApiError` (they read `error.code` as the HTTP status and `error.errors[0].reason` to decide retries).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A server listening on loopback. */
export interface LoopbackServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Stops listening; resolves once the server is closed. */
  stop(): Promise<void>;
}

/**
 * Starts `server` on 127.0.0.1 (`port` 0 picks a free one). With `dropConnections` (the default), stop
 * destroys open connections first: clients keep connections alive, and a test's `afterAll` must not wait
 * for them to time out.
 */
export async function listenOnLoopback(
  server: Server,
  port: number,
  options: { dropConnections?: boolean } = {},
): Promise<LoopbackServer> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    stop: () =>
      new Promise((resolve) => {
        if (options.dropConnections ?? true) server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An error as Google's JSON APIs report it. */
export interface JsonApiFailure {
  /** HTTP status. */
  status: number;
  /** `errors[0].reason`, e.g. `notFound`, `backendError`. */
  reason: string;
  message: string;
}

/** Google's JSON error body: `{error: {code, message, errors: [{domain, reason, message, ...item}], status?}}`. */
export function jsonErrorBody(
  failure: JsonApiFailure,
  extra: { status?: string; item?: Record<string, string> } = {},
): unknown {
  const { status, reason, message } = failure;
  return {
    error: {
      code: status,
      message,
      errors: [{ domain: 'global', reason, message, ...extra.item }],
      ...(extra.status === undefined ? {} : { status: extra.status }),
    },
  };
}

/** The message of any thrown value. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
