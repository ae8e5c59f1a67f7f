/**
 * The backfill function's HTTP handler on a plain Node server on loopback, called as the functions
 * framework calls it: the path and query string, the JSON body (kept raw too, as Express keeps it) and the
 * headers. A route the function does not serve answers 404.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleBackfillRequest } from '../../../functions/backfill/routes';
import type { BackfillDeps } from '../../../shared/app/backfill/deps';

/** A running server: its base URL, and how to close it. */
export interface BackfillServer {
  url: string;
  close(): Promise<void>;
}

/** Serves the backfill function over `deps` on a free port. */
export async function serveBackfill(deps: BackfillDeps): Promise<BackfillServer> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const parsed = new URL(req.url ?? '/', 'http://x');
      const reply = {
        status(code: number) {
          res.statusCode = code;
          return reply;
        },
        json(body: unknown) {
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify(body));
        },
      };
      const request = {
        method: req.method ?? 'GET',
        path: parsed.pathname,
        query: Object.fromEntries(parsed.searchParams),
        body: raw.length > 0 ? JSON.parse(raw.toString()) : undefined,
        rawBody: raw,
        header: (n: string) => req.headers[n.toLowerCase()] as string | undefined,
      };
      void handleBackfillRequest(deps, request, reply).then((matched) => {
        if (!matched) reply.status(404).json({});
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
