/**
 * Functions answered before the functions framework's per-request `domain` (ADR-3001). The framework runs every
 * request of every function inside a new `domain`, and the first one created enables the domain module's async
 * hook for the rest of the process: from then on every promise is created with a destroy hook (a weak
 * callback the garbage collector must run) and every async callback is entered and exited through the hook,
 * whether or not a domain is active. In the writer benchmark that bookkeeping and its garbage were a sixth of
 * the writer's CPU. A function registered here is called by a layer the edge puts just before the framework's
 * route, so no domain is ever created in its process; the framework's other layers (body parsers, execution
 * context, timeout) still run first.
 *
 * A process serves the function the platform names in `FUNCTION_TARGET` (as the body guard reads it); with no
 * name, or a name not registered here, requests go through the framework's route as before.
 */
import { createLogger } from '../domain/log';
import type { HttpRequest, HttpResponse } from './health';

/** A function's handler, as registered with the framework. */
export type DirectHandler = (req: HttpRequest, res: HttpResponse) => void | Promise<void>;

interface DirectResponse extends HttpResponse {
  headersSent?: boolean;
}

// One registry per process, like the body limits: the edge is installed by whichever copy of its module
// a process-wide diagnostics channel reached first (ADR-1514).
const REGISTRY = Symbol.for('sluice.directHandlers');
const registry = globalThis as { [REGISTRY]?: Map<string, DirectHandler> };
registry[REGISTRY] ??= new Map<string, DirectHandler>();
const handlers = registry[REGISTRY];

/** Registers `name`'s handler to be called before the framework's domain when the process serves `name`. */
export function registerDirectHandler(name: string, handler: DirectHandler): void {
  handlers.set(name, handler);
}

/** The handler of this process's function, when it was registered to be called directly. */
export function directHandler(): DirectHandler | undefined {
  const target = process.env.FUNCTION_TARGET;
  return target ? handlers.get(target) : undefined;
}

/**
 * The Express layer: calls this process's direct handler and ends the request there, or passes it on to the
 * framework's route. A handler that rejects (it should answer every failure itself) gets the answer the
 * framework would have given it, as JSON: 500, once, logged as `<function>.failed`.
 */
export function directLayer(req: unknown, res: unknown, next: (err?: unknown) => void): void {
  const handler = directHandler();
  if (!handler) {
    next();
    return;
  }
  const response = res as DirectResponse;
  new Promise<void>((resolve) => resolve(handler(req as HttpRequest, response))).catch((err: unknown) => {
    // `<function>.failed`: for the writer, the event its errors metric and alert count (infra/log-contract.ts).
    createLogger((l) => process.stdout.write(`${l}\n`)).error('request not handled', err, {
      event: `${process.env.FUNCTION_TARGET}.failed`,
      status: 500,
    });
    if (!response.headersSent) response.status(500).json({ error: { code: 500, message: 'internal error' } });
  });
}
