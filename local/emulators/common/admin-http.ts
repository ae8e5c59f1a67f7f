/**
 * A tiny JSON-over-HTTP admin endpoint, the same shape for every emulator:
 * `GET /faults`, `POST /faults` (a FaultRule), `DELETE /faults[/id]`, plus routes an emulator adds.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { FaultInjector, FaultRule } from './faults';
import { errorMessage, type LoopbackServer, listenOnLoopback } from './json-http';

/** A route handler: receives the parsed JSON body (or undefined) and the URL; returns a JSON-able value. */
export type AdminRoute = (body: unknown, url: URL) => unknown | Promise<unknown>;

/** Started admin endpoint. */
export type AdminServer = LoopbackServer;

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

/**
 * Starts the admin endpoint on loopback. `routes` keys are `METHOD /path` (exact path match).
 * @param port 0 picks a free port.
 */
export async function startAdminServer(
  port: number,
  faults: FaultInjector,
  routes: Record<string, AdminRoute> = {},
): Promise<AdminServer> {
  const all: Record<string, AdminRoute> = {
    'GET /faults': () => faults.list(),
    'POST /faults': (body) => ({ id: faults.add(body as FaultRule) }),
    'DELETE /faults': () => {
      faults.clear();
      return {};
    },
    ...routes,
  };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const match = /^\/faults\/(\d+)$/.exec(url.pathname);
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value ?? {}));
    };
    readJson(req)
      .then(async (body) => {
        if (req.method === 'DELETE' && match) {
          faults.clear(Number(match[1]));
          return send(200, {});
        }
        const route = all[`${req.method} ${url.pathname}`];
        if (!route) return send(404, { error: `no admin route ${req.method} ${url.pathname}` });
        return send(200, await route(body, url));
      })
      .catch((err: unknown) => send(400, { error: errorMessage(err) }));
  });
  // A graceful stop: an admin call in flight finishes before `stop` resolves.
  return listenOnLoopback(server, port, { dropConnections: false });
}

/** The admin endpoint when the emulator was asked for one (`port` given and not `false`), else none. */
export async function startAdminServerIfAsked(
  port: number | false | undefined,
  faults: FaultInjector,
  routes: Record<string, AdminRoute> = {},
): Promise<AdminServer | undefined> {
  return port === undefined || port === false ? undefined : startAdminServer(port, faults, routes);
}
