/**
 * The health route every function answers, so a deployment (and the artifact test) can check that the
 * function started and loaded its code.
 */

/** Minimal request / response shapes (the functions framework passes Express objects). */
export interface HttpRequest {
  method: string;
  path: string;
  body?: unknown;
  /** The parsed query string (Express's `req.query`). */
  query?: Record<string, unknown>;
  header(name: string): string | undefined;
}

/** Minimal response shape used by the HTTP edge. */
export interface HttpResponse {
  status(code: number): HttpResponse;
  json(body: unknown): void;
  /** Sets a header (Express's `res.set`). */
  set?(name: string, value: string): unknown;
}

/** Answers `GET /healthz`; returns false when the request is not a health check. */
export function answerHealth(name: string, req: HttpRequest, res: HttpResponse): boolean {
  if (req.method !== 'GET' || req.path !== '/healthz') return false;
  res.status(200).json({ function: name, ok: true });
  return true;
}

/** Answers a route the function does not serve. */
export function answerNotFound(req: HttpRequest, res: HttpResponse): void {
  res.status(404).json({ error: { code: 404, message: `no route ${req.method} ${req.path}` } });
}
