/**
 * Bounded request bodies (ADR-2302): the functions framework parses every body up to 1 GB, inflating
 * `Content-Encoding: gzip` and `deflate`, before the function runs, so a limit checked in the function comes
 * after the memory is spent. The guard runs first on the framework's Express app and refuses, before any
 * parser reads a byte:
 *
 * - any content coding but `identity` (415): no caller of sluice compresses (Cloud Tasks, Pub/Sub push,
 *   Cloud Scheduler and the console send plain JSON), and an inflated body has no size known in advance;
 * - a `Content-Length` over the function's limit (413);
 * - a body without `Content-Length` (chunked) once the bytes received pass the limit (413), counted as
 *   they arrive.
 *
 * Each function registers its limit under its name; a process serves the function the platform names in
 * `FUNCTION_TARGET` (the functions framework's reserved variable), or, when it does not say, the largest
 * limit registered (the deployed source loads every function).
 */

/** The request as the guard sees it (Node's IncomingMessage through Express). */
interface GuardedRequest {
  headers: Record<string, string | string[] | undefined>;
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'error', listener: (err: unknown) => void): unknown;
  emit(event: 'error', err: unknown): boolean;
}

/** Express middleware: calls `next(err)` to have the JSON error answer refuse the request. */
export type Middleware = (req: GuardedRequest, res: unknown, next: (err?: unknown) => void) => void;

// One registry per process, whichever copy of this module registers or reads it: the edge is installed through
// a process-wide diagnostics channel (ADR-1514), so a guard installed by one module instance answers requests
// for functions another instance registered (as under a test runner that loads modules per file).
const REGISTRY = Symbol.for('sluice.bodyLimits');
const registry = globalThis as { [REGISTRY]?: Map<string, () => number> };
registry[REGISTRY] ??= new Map<string, () => number>();
const limits = registry[REGISTRY];

/** Registers `name`'s body limit in bytes (a function, so it may come from configuration read later). */
export function registerBodyLimit(name: string, bytes: number | (() => number)): void {
  limits.set(name, typeof bytes === 'number' ? () => bytes : bytes);
}

/** The body limit of this process's function. */
export function bodyLimit(): number {
  const target = process.env.FUNCTION_TARGET;
  const own = target ? limits.get(target) : undefined;
  if (own) return own();
  const all = [...limits.values()].map((f) => f());
  return all.length > 0 ? Math.max(...all) : 64 * 1024;
}

/** A refusal shaped as the body parsers' own errors, so the edge answers it (edge.ts `edgeProblem`). */
function refusal(type: string, status: number, extra: Record<string, unknown>): Error {
  return Object.assign(new Error(type), { type, status, expose: true, ...extra });
}

function header(req: GuardedRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/** Counts a chunked body's bytes as they arrive; past the limit the parser reading it gets a 413 error. */
function countChunks(req: GuardedRequest, limit: number): void {
  let received = 0;
  let refused = false;
  // Without a listener an emitted 'error' would throw; the parser (when one reads the body) has its own.
  req.on('error', () => {});
  req.on('data', (chunk) => {
    received += chunk.length;
    if (refused || received <= limit) return;
    refused = true;
    req.emit('error', refusal('entity.too.large', 413, { limit, received }));
  });
}

/** The guard: refuses by content coding and declared length, and counts bodies of unknown length. */
export const bodyGuard: Middleware = (req, _res, next) => {
  const coding = (header(req, 'content-encoding') ?? 'identity').trim().toLowerCase();
  if (coding !== 'identity' && coding !== '')
    return next(refusal('encoding.unsupported', 415, { encoding: coding }));
  const limit = bodyLimit();
  const declared = header(req, 'content-length');
  if (declared !== undefined) {
    if (Number(declared) > limit) return next(refusal('entity.too.large', 413, { limit }));
    return next();
  }
  if (header(req, 'transfer-encoding') !== undefined) countChunks(req, limit);
  next();
};
