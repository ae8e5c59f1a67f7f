/**
 * The Lineage emulator's gRPC server and method table: `ProcessOpenLineageRunEvent`, the listings
 * (`ListProcesses`, `ListRuns`, `ListLineageEvents`), `SearchLinks` and the single-resource reads. Fault
 * rules (keyed by method name) apply before a handler runs; a `drop` answers UNAVAILABLE, as a lost
 * connection looks to the client.
 */
import { status } from '@grpc/grpc-js';
import type { Struct } from '../../../shared/domain/lineage/struct';
import type { FaultInjector } from '../common/faults';
import { type GrpcServer, startUnaryGrpc } from '../common/grpc-unary';
import { lineageService } from './proto';
import { LineageError, type LineageState, type StoredLink } from './state';

type Req = Record<string, unknown>;
type Handler = (req: Req) => unknown;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * One page of `items`, under `key` as the List method's response names them. Offset paging; the token is the
 * offset, opaque to clients.
 */
function page<T>(key: string, items: T[], req: Req): Record<string, T[] | string> {
  const size = Math.min(Number(req.pageSize) || 100, 1000);
  const start = req.pageToken ? Number(Buffer.from(str(req.pageToken), 'base64url').toString()) : 0;
  if (!Number.isInteger(start) || start < 0)
    throw new LineageError(status.INVALID_ARGUMENT, 'Invalid page token');
  const end = start + size;
  return {
    [key]: items.slice(start, end),
    nextPageToken: end < items.length ? Buffer.from(String(end)).toString('base64url') : '',
  };
}

function found<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new LineageError(status.NOT_FOUND, `${name} not found`);
  return value;
}

function matches(link: StoredLink, req: Req): boolean {
  const ref = (req.source ?? req.target) as { fullyQualifiedName?: string } | undefined;
  if (!ref?.fullyQualifiedName)
    throw new LineageError(status.INVALID_ARGUMENT, 'one of source or target is required');
  const side = req.source ? link.source : link.target;
  return side.fullyQualifiedName === ref.fullyQualifiedName;
}

/** The method table over the state. */
export function lineageHandlers(state: LineageState): Record<string, Handler> {
  const under = <T extends { name: string }>(items: Iterable<T>, req: Req) =>
    [...items].filter((x) => x.name.startsWith(`${str(req.parent)}/`));
  return {
    ProcessOpenLineageRunEvent: (req) =>
      state.process(str(req.parent), req.openLineage as Struct | undefined, str(req.requestId) || undefined),
    ListProcesses: (req) => page('processes', under(state.processes.values(), req), req),
    GetProcess: (req) => found(state.processes.get(str(req.name)), str(req.name)),
    ListRuns: (req) => page('runs', under(state.runs.values(), req), req),
    GetRun: (req) => found(state.runs.get(str(req.name)), str(req.name)),
    ListLineageEvents: (req) =>
      page(
        'lineageEvents',
        state.events.filter((e) => e.run === str(req.parent)).map(({ run: _r, ...e }) => e),
        req,
      ),
    SearchLinks: (req) => {
      const parent = str(req.parent);
      const links = state.events
        .filter((e) => e.name.startsWith(`${parent}/`))
        .flatMap((e) => e.links.map((l, i) => ({ link: l, name: `${e.name}/links/${i}`, at: e.startTime })))
        .filter((x) => matches(x.link, req))
        .map((x) => ({ name: x.name, source: x.link.source, target: x.link.target, startTime: x.at }));
      return page('links', links, req);
    },
  };
}

/** Starts the server on loopback; every method without a handler answers UNIMPLEMENTED. */
export async function startLineageGrpc(
  state: LineageState,
  faults: FaultInjector,
  port: number,
): Promise<GrpcServer> {
  return startUnaryGrpc(lineageService(), lineageHandlers(state), faults, port, LineageError);
}
