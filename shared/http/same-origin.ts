/**
 * Cross-site request forgery defence of the operator routes (ADR-2301). Operators reach the console through
 * `gcloud run services proxy`, which adds their identity to every request, so the browser's ambient
 * authority is the operator's: a page of another origin must not be able to change anything. A
 * state-changing request (any method but GET, HEAD and OPTIONS) is refused unless
 *
 * - its `Content-Type` is `application/json`: an HTML form or a "simple" `fetch` cannot send that type to
 *   another origin without a CORS preflight, which these routes never answer;
 * - its `Sec-Fetch-Site`, when the browser sends one, is `same-origin` or `none` (typed, not linked);
 * - its `Origin`, when sent, names the host the request was sent to, or a loopback host (the local proxy);
 * - with an `Origin`, its `Host` is a loopback name or a Cloud Run `*.run.app` name: a page that rebinds its
 *   own DNS name to the proxy's loopback address is same-origin with itself, but sends its own name as Host.
 *
 * Machine callers (Cloud Tasks, the CLI) send JSON and no browser headers, and pass.
 */
import type { HttpRequest } from './health';

/** Why a request is refused: the status and the message of the JSON answer. */
export interface Refusal {
  status: number;
  message: string;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i;
const RUN_APP = /^[a-z0-9-]+(?:\.[a-z0-9-]+)*\.run\.app(?::\d+)?$/i;

function originHost(origin: string): string | undefined {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return undefined;
  }
}

/** The refusal of a state-changing request that may come from another site; undefined when it may run. */
export function crossSiteRefusal(req: HttpRequest): Refusal | undefined {
  if (SAFE_METHODS.has(req.method)) return undefined;
  const type = (req.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json')
    return { status: 415, message: `send the body as application/json (saw "${type ?? ''}")` };
  const site = req.header('sec-fetch-site')?.toLowerCase();
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    return { status: 403, message: `cross-site request refused (Sec-Fetch-Site: ${site})` };
  const host = (req.header('host') ?? '').toLowerCase();
  const origin = req.header('origin');
  if (origin !== undefined) {
    const from = originHost(origin);
    if (from === undefined || (from !== host && !LOOPBACK.test(from)))
      return { status: 403, message: `cross-origin request refused (Origin: ${origin})` };
  }
  // Browsers send Origin on every state-changing request: one without it is not a page's (ADR-2301).
  if (origin !== undefined && !LOOPBACK.test(host) && !RUN_APP.test(host))
    return { status: 403, message: `Host "${host}" is not a loopback or run.app name` };
  return undefined;
}
