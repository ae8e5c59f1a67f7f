/**
 * The CLI's HTTP client of the operator function: JSON in and out, and authentication as Cloud Run IAM
 * wants it — an identity token for the function's URL from Application Default Credentials
 * (`google-auth-library`), or a token given explicitly — except against loopback (the local stack), which
 * is called plainly.
 */
import { GoogleAuth } from 'google-auth-library';

/** An answer of the operator function. */
export interface Answer {
  status: number;
  body: unknown;
}

/** A failed call, with the function's own error message when it gave one. */
export class OperatorError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'OperatorError';
  }
}

function isLoopback(url: URL): boolean {
  return ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}

/** Where the operator function is and how to authenticate to it. */
export interface ClientOptions {
  /** Base URL of the operator (backfill) function, e.g. `https://sluice-backfill-….run.app`. */
  url: string;
  /** An identity token to send as is (e.g. `gcloud auth print-identity-token`); default: from ADC. */
  token?: string;
}

function messageOf(body: unknown, status: number): string {
  if (body && typeof body === 'object' && 'error' in body) {
    const e = (body as { error: unknown }).error;
    if (e && typeof e === 'object' && 'message' in e) return String((e as { message: unknown }).message);
    if (typeof e === 'string') return e;
  }
  return typeof body === 'string' && body ? body.slice(0, 300) : `HTTP ${status}`;
}

/** A JSON client of one operator function. */
export class OperatorClient {
  private readonly base: URL;
  private authorization: Promise<string | undefined> | undefined;

  constructor(private readonly options: ClientOptions) {
    try {
      this.base = new URL(options.url);
    } catch {
      throw new OperatorError(`--url ${JSON.stringify(options.url)} is not a URL`, 0);
    }
  }

  private async header(): Promise<string | undefined> {
    if (this.options.token) return `Bearer ${this.options.token}`;
    if (isLoopback(this.base)) return undefined;
    this.authorization ??= (async () => {
      const audience = this.base.origin;
      const client = await new GoogleAuth().getIdTokenClient(audience);
      const headers = await client.getRequestHeaders(audience);
      return headers.get('authorization') ?? undefined;
    })();
    return this.authorization;
  }

  /** Sends one request; resolves the parsed answer for 2xx, rejects with {@link OperatorError} otherwise. */
  async call(method: string, path: string, body?: unknown): Promise<Answer> {
    const url = new URL(path, this.base);
    const auth = await this.header().catch((err: unknown) => {
      const why = err instanceof Error ? err.message : String(err);
      throw new OperatorError(
        `no identity token for ${this.base.origin} from Application Default Credentials: ${why} (or pass --token)`,
        0,
      );
    });
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
          ...(auth ? { authorization: auth } : {}),
          // Every state-changing route requires JSON, even with no body (ADR-2301).
          'content-type': 'application/json',
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(60_000),
      });
    } catch (err) {
      throw new OperatorError(`cannot reach ${url.origin}: ${(err as Error).message}`, 0);
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON (a proxy's page, say): keep the text for the message.
    }
    if (res.ok) return { status: res.status, body: parsed };
    if (res.status === 404 && messageOf(parsed, 404).startsWith('no route')) {
      throw new OperatorError(
        `${method} ${url.pathname}: this operator function has no such route (an older version?)`,
        404,
        parsed,
      );
    }
    if (res.status === 401 || res.status === 403) {
      throw new OperatorError(
        `${method} ${url.pathname}: ${res.status} — the caller needs roles/run.invoker on the function (sluice:operators)`,
        res.status,
        parsed,
      );
    }
    throw new OperatorError(
      `${method} ${url.pathname}: ${res.status} ${messageOf(parsed, res.status)}`,
      res.status,
      parsed,
    );
  }
}
