/**
 * Routing of one SQL query: a change-stream TVF query on a live stream becomes a streaming query of change
 * rows; anything else is left to the core. Validation runs in the service's order, so the first error a
 * client sees for a bad query is the one the service would report.
 */
import { Code, type QueryRequest, SpannerError, type StreamingQuery } from '../hooks';
import type { ChangeSignal } from './change-signal';
import type { ChangeRow } from './model';
import { type ExecEnv, initialQuery, partitionQuery } from './query-exec';
import type { QueryFaults } from './query-faults';
import { findTvf, parseTvfArguments, type TvfReference } from './query-parse';
import {
  bindArguments,
  resolvePartition,
  type TvfArgs,
  validateArguments,
  validateTransport,
} from './query-validate';
import { type LiveStream, retentionNs, type StreamRegistry } from './registry';
import { queryMetadata } from './wire';

/** What routing needs from the engine. */
export interface RouteContext {
  now: () => bigint;
  registry: StreamRegistry;
  changes: ChangeSignal;
  faults: QueryFaults;
}

/** The streaming query for a change-stream TVF query, or undefined when `request` is not one. */
export function routeChangeStreamQuery(request: QueryRequest, ctx: RouteContext): StreamingQuery | undefined {
  const pg = request.schema.dialect === 'POSTGRESQL';
  const ref = findTvf(request.sql, pg);
  if (!ref) return undefined;
  const live = ctx.registry.find(ref.streamName);
  if (!live) return undefined;
  if (!request.streaming) validateTransport(request.transaction, false);
  const { args, nowNs } = boundArguments(request, pg, ref, live, ctx.now);
  validateTransport(request.transaction, true);
  const rows = executeQuery(args, args.startNs ?? nowNs, live, execEnv(request, live, ctx));
  const rendered = ctx.faults.render(rows, pg, args.token ?? undefined);
  return { metadata: queryMetadata(pg, ref.tvfName), rows: rendered };
}

/** Binds the TVF arguments to the query's parameters and checks them against the stream, at one `now`. */
function boundArguments(
  request: QueryRequest,
  pg: boolean,
  ref: TvfReference,
  live: LiveStream,
  now: () => bigint,
): { args: TvfArgs; nowNs: bigint } {
  const raw = parseTvfArguments(request.sql, pg, ref);
  const args = bindArguments(raw, request.params, request.paramTypes, ref.tvfName);
  const nowNs = now();
  const limits = { nowNs, createdAtNs: live.stream.createdAtNs, retentionNs: retentionNs(live.stream) };
  validateArguments(args, limits, live.partitions);
  return { args, nowNs };
}

/** The environment a running query sees: the clock, change wake-ups, cancellation and the stream's fate. */
function execEnv(request: QueryRequest, live: LiveStream, ctx: RouteContext): ExecEnv {
  return {
    now: ctx.now,
    onChange: ctx.changes.onChange,
    signal: request.signal,
    checkAlive: () => {
      if (!ctx.registry.isCurrent(live.key, live.stream))
        throw new SpannerError(Code.NOT_FOUND, `Change Stream not found: ${live.stream.name}`);
    },
  };
}

/** The initial query (no partition token) or the query of one partition. */
function executeQuery(
  args: TvfArgs,
  startNs: bigint,
  live: LiveStream,
  env: ExecEnv,
): AsyncGenerator<ChangeRow> {
  const partition = resolvePartition(args, live.partitions);
  if (!partition) return initialQuery(startNs, live.partitions, env);
  const window = { partition, partitions: live.partitions, startNs, endNs: args.endNs };
  return partitionQuery({ ...window, heartbeatMs: Number(args.heartbeatMs) }, env);
}
