/**
 * The GCS emulator's HTTP server: routing, fault injection and the JSON error model around the handlers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type FaultInjector, sleep } from '../common/faults';
import { errorMessage, type LoopbackServer, listenOnLoopback } from '../common/json-http';
import { GcsError } from './errors';
import { parseFields, selectFields } from './fields';
import { type Reply, readBody } from './http';
import { router } from './router';
import type { GcsStore } from './store';
import { UploadSessions } from './uploads';

/** A listening server. */
export type GcsHttpServer = LoopbackServer;

function send(res: ServerResponse, reply: Reply, head: boolean, fields?: string | null): void {
  const headers: Record<string, string> = { ...(reply.headers ?? {}) };
  let payload: Buffer | undefined = reply.body;
  if (reply.json !== undefined) {
    const ok = reply.status < 300 && fields;
    payload = Buffer.from(JSON.stringify(ok ? selectFields(reply.json, parseFields(fields)) : reply.json));
    headers['content-type'] = 'application/json; charset=UTF-8';
  }
  if (payload) headers['content-length'] = String(payload.length);
  res.writeHead(reply.status, headers);
  res.end(head ? undefined : payload);
}

function errorReply(err: unknown): Reply {
  const e = err instanceof GcsError ? err : new GcsError(500, errorMessage(err));
  if (e.plainText)
    return {
      status: e.status,
      headers: { 'content-type': 'text/plain; charset=UTF-8' },
      body: Buffer.from(e.message),
    };
  return { status: e.status, json: e.body() };
}

/** Starts the HTTP server on loopback; `port` 0 picks a free one. */
export async function startGcsHttp(
  store: GcsStore,
  faults: FaultInjector,
  port: number,
): Promise<GcsHttpServer> {
  const match = router(new UploadSessions());
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const rawPath = (req.url ?? '/').split('?')[0] ?? '/';
    const body = await readBody(req);
    const route = match(req.method ?? 'GET', rawPath, url);
    const head = req.method === 'HEAD';
    if (!route) return send(res, errorReply(new GcsError(404, `Not Found: ${req.method} ${rawPath}`)), head);
    store.countRequest(route.method);
    const fault = faults.take(route.method);
    if (fault?.delayMs) await sleep(fault.delayMs);
    const failNow = fault && fault.afterItems === undefined;
    if (failNow && fault.drop) return req.socket.destroy();
    if (failNow && fault.code)
      return send(res, errorReply(new GcsError(fault.code, fault.message ?? 'injected fault')), head);
    const base = `http://${req.headers.host ?? 'localhost'}`;
    let reply: Reply;
    try {
      reply = route.handle({ store, req, url, params: route.params, body, base });
    } catch (err) {
      reply = errorReply(err);
    }
    // `afterItems` set: the request takes effect, then its answer is lost (drop) or replaced (code).
    if (fault && !failNow && fault.drop) return req.socket.destroy();
    if (fault && !failNow && fault.code)
      reply = errorReply(new GcsError(fault.code, fault.message ?? 'injected fault'));
    try {
      send(res, reply, head, url.searchParams.get('fields'));
    } catch (err) {
      send(res, errorReply(err), head);
    }
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => send(res, errorReply(err), false));
  });
  return listenOnLoopback(server, port);
}
