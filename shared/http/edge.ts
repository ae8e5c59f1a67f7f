/**
 * JSON answers at every HTTP edge (ADR-1508): a body the framework's parsers refuse (malformed JSON, an
 * unsupported charset or encoding, an oversized body), a bad percent-encoding or a wrong method gets a JSON
 * error naming the problem, never Express's HTML page with a stack trace.
 *
 * The functions framework parses bodies before the function runs and hands parse errors to Express's final
 * handler; the only hook is the framework's Express app, reached as `req.app` (or from the server in the local
 * host), on which {@link installJsonErrors} registers an error middleware once.
 */
import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel';
import { bodyGuard } from './body-guard';
import { directLayer } from './direct';
import type { HttpRequest, HttpResponse } from './health';

/** An error from the framework's body parsers (`body-parser`): `type` and `status` say what went wrong. */
interface ParserError {
  type?: unknown;
  status?: unknown;
  message?: unknown;
  limit?: unknown;
  charset?: unknown;
  encoding?: unknown;
}

/** The part of an Express app the edge needs. */
export interface ExpressApp {
  /** Express 5's router, whose layers run in order (the guard is moved to the front of them). */
  router?: { stack: unknown[] };
  use(
    handler: (err: unknown, req: unknown, res: ErrorResponse, next: (err?: unknown) => void) => void,
  ): unknown;
}

interface ErrorResponse extends HttpResponse {
  headersSent?: boolean;
}

const installed = new WeakSet<object>();

/** The status and message a framework-level failure is answered with. */
export function edgeProblem(err: unknown): { status: number; message: string } {
  const e = (typeof err === 'object' && err !== null ? err : {}) as ParserError;
  const text = typeof e.message === 'string' ? e.message : String(err);
  switch (e.type) {
    case 'entity.parse.failed':
      return { status: 400, message: `malformed JSON body: ${text}` };
    case 'entity.too.large':
      return { status: 413, message: `body too large (limit ${String(e.limit)} bytes)` };
    case 'charset.unsupported':
      return { status: 415, message: `unsupported charset "${String(e.charset)}": send UTF-8` };
    case 'encoding.unsupported':
      return {
        status: 415,
        message: `unsupported content encoding "${String(e.encoding)}": send the body uncompressed`,
      };
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return { status: 400, message: text };
  }
  if (err instanceof URIError) return { status: 400, message: `bad percent-encoding in the URL: ${text}` };
  const status = typeof e.status === 'number' && e.status >= 400 && e.status < 500 ? e.status : 500;
  return { status, message: status === 500 ? 'internal error' : text };
}

/** A layer of Express 5's router: the framework's function route is the one with a `route`. */
interface RouterLayer {
  route?: unknown;
}

function lastRoute(stack: unknown[]): number {
  for (let i = stack.length - 1; i >= 0; i--) if ((stack[i] as RouterLayer).route !== undefined) return i;
  return -1;
}

/**
 * Registers the body guard before the framework's body parsers (ADR-2302), the direct layer just before the
 * framework's function route (ADR-3001) and the JSON error answer after everything, once per Express app.
 */
export function installOn(app: ExpressApp): void {
  if (installed.has(app)) return;
  installed.add(app);
  app.use(bodyGuard as unknown as Parameters<ExpressApp['use']>[0]);
  const stack = app.router?.stack;
  if (stack) stack.unshift(stack.pop());
  const route = stack ? lastRoute(stack) : -1;
  if (stack && route >= 0) {
    app.use(directLayer as unknown as Parameters<ExpressApp['use']>[0]);
    stack.splice(route, 0, stack.pop());
  }
  app.use((err, _req, res, next) => {
    if (res.headersSent) return next(err);
    const { status, message } = edgeProblem(err);
    res.status(status).json({ error: { code: status, message } });
  });
}

let subscribed = false;

/**
 * Registers the JSON error answer on the framework's app before it handles its first request (ADR-1514).
 * The framework builds its Express app after loading the function module and exposes neither; Node publishes
 * every incoming request on the `http.server.request.start` diagnostics channel with its server, before the
 * server's request listener — the app — runs. Call once at module load; idempotent.
 */
export function installJsonErrorsAtStart(): void {
  if (subscribed) return;
  subscribed = true;
  const handler = (message: unknown) => {
    const server = (message as { server?: { listeners?: (event: string) => unknown[] } }).server;
    for (const listener of server?.listeners?.('request') ?? []) {
      if (typeof listener === 'function' && typeof (listener as { use?: unknown }).use === 'function')
        installOn(listener as unknown as ExpressApp);
    }
  };
  // One handler per process. The channel is the process's, this module may not be: a test runner loads a
  // fresh copy per test file, and an older copy's handler would install its own body guard (with the limits
  // its file registered) on every later app. The newest copy replaces the older one.
  const shared = channel(REQUEST_START) as unknown as { sluiceEdge?: (message: unknown) => void };
  if (shared.sluiceEdge) unsubscribe(REQUEST_START, shared.sluiceEdge);
  shared.sluiceEdge = handler;
  subscribe(REQUEST_START, handler);
}

const REQUEST_START = 'http.server.request.start';

/** Registers the JSON error answer on the framework's app that delivered `req` (a no-op without one). */
export function installJsonErrors(req: HttpRequest): void {
  const app = (req as { app?: unknown }).app;
  if (typeof app === 'function' || (typeof app === 'object' && app !== null)) {
    if (typeof (app as { use?: unknown }).use === 'function') installOn(app as ExpressApp);
  }
}

/** Answers 405 with `Allow`. */
export function answerMethodNotAllowed(req: HttpRequest, res: HttpResponse, allow: readonly string[]): void {
  res.set?.('Allow', allow.join(', '));
  const message = `${req.method} is not allowed on ${req.path}; use ${allow.join(', ')}`;
  res.status(405).json({ error: { code: 405, message } });
}

/** Decodes a path segment; undefined when its percent-encoding is bad (the caller answers 400). */
export function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
