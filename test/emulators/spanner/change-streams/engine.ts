/**
 * The change-stream engine of one emulated database: implements the core's `ChangeStreamHooks` and adds an
 * admin handle for tests (churn on demand, end a query after K rows with a code, inspect partitions).
 */
import {
  type ChangeStreamHooks,
  Code,
  type CommitEvent,
  type QueryRequest,
  type SchemaView,
  SpannerError,
  type StreamingQuery,
  type WireValue,
} from '../hooks';
import { applyCommand, renderDdl } from './catalog';
import { parseChangeStreamDdl } from './ddl-parse';
import { informationSchemaRows } from './information-schema';
import type { ChangeRow, StreamDefinition } from './model';
import { type ChurnEvent, hashKey, PartitionSet } from './partitions';
import { type ExecEnv, initialQuery, partitionQuery } from './query-exec';
import { findTvf, parseTvfArguments } from './query-parse';
import { bindArguments, resolvePartition, validateArguments, validateTransport } from './query-validate';
import { buildRecords } from './records';
import { parseDurationNs, realClock } from './time';
import { queryMetadata, toGoogleSqlRow, toPostgresRow } from './wire';

/** Options of {@link createChangeStreamEngine}. */
export interface ChangeStreamEngineOptions {
  /** Partitions each new stream starts with (default 2, like the official emulator). */
  initialPartitions?: number;
  /** Churn every stream's partitions on this interval in ms; 0 (default) = only on demand. */
  churnMs?: number;
  /** The core's clock (ns). Commit timestamps must come from it. Default: wall clock. */
  now?: () => bigint;
  /** Dialect for INFORMATION_SCHEMA and DDL text before the first schema is seen. */
  dialect?: SchemaView['dialect'];
  /** false accepts any retention_period (e.g. `5s`) so expiry can be tested; default true ([24h, 7d]). */
  retentionCheck?: boolean;
}

/** A partition as the admin handle reports it. */
export interface PartitionInfo {
  stream: string;
  token: string;
  startNs: bigint;
  endNs: bigint | null;
  parents: string[];
  children: string[];
  records: number;
}

/** Test controls. */
export interface ChangeStreamAdmin {
  /** Churns every stream's partitions now (or only `stream`'s); returns what happened. */
  churnNow(stream?: string): ChurnEvent[];
  /** The next change-stream query returns `k` rows, then fails with `code`. */
  endQueryAfter(k: number, code: number, message?: string): void;
  /** Every partition of every stream (or of `stream`). */
  partitions(stream?: string): PartitionInfo[];
  /** Stops the churn timer. */
  close(): void;
}

/** The hooks plus the admin handle. */
export type ChangeStreamEngine = ChangeStreamHooks & { admin: ChangeStreamAdmin };

const DEFAULT_RETENTION_NS = 86_400_000_000_000n;

/** Creates the change-stream engine for one database. */
export function createChangeStreamEngine(options: ChangeStreamEngineOptions = {}): ChangeStreamEngine {
  const now = options.now ?? realClock();
  const initialPartitions = options.initialPartitions ?? 2;
  const checkRetention = options.retentionCheck ?? true;
  const streams = new Map<string, StreamDefinition>();
  const sets = new Map<string, PartitionSet>();
  const dropped = new Set<string>();
  const listeners = new Set<() => void>();
  const faults: Array<{ k: number; code: number; message: string }> = [];
  let dialect: SchemaView['dialect'] = options.dialect ?? 'GOOGLE_STANDARD_SQL';
  let lastSchema: SchemaView | undefined;
  let lastCommitNs = 0n;
  let txCounter = 0;

  const notify = () => {
    for (const l of [...listeners]) l();
  };
  const onChange = (listener: () => void) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  };
  const seen = (schema: SchemaView) => {
    lastSchema = schema;
    dialect = schema.dialect;
  };
  const retentionOf = (s: StreamDefinition) =>
    s.options.retention_period
      ? (parseDurationNs(s.options.retention_period) ?? DEFAULT_RETENTION_NS)
      : DEFAULT_RETENTION_NS;

  const churn = (only?: string): ChurnEvent[] => {
    const t = now();
    const at = t > lastCommitNs ? t : lastCommitNs + 1n;
    const events = [...sets.entries()]
      .filter(([k]) => only === undefined || k === only.toLowerCase())
      .map(([, set]) => set.churn(at));
    notify();
    return events;
  };
  const timer =
    options.churnMs && options.churnMs > 0 ? setInterval(() => churn(), options.churnMs) : undefined;
  timer?.unref();

  const render = async function* (rows: AsyncGenerator<ChangeRow>, pg: boolean): AsyncGenerator<WireValue[]> {
    const fault = faults.shift();
    let n = 0;
    try {
      for (;;) {
        if (fault && n >= fault.k) throw new SpannerError(fault.code, fault.message);
        const next = await rows.next();
        if (next.done) return;
        n++;
        yield pg ? toPostgresRow(next.value) : toGoogleSqlRow(next.value);
      }
    } finally {
      await rows.return(undefined);
    }
  };

  const routeQuery = (request: QueryRequest): StreamingQuery | undefined => {
    seen(request.schema);
    const pg = request.schema.dialect === 'POSTGRESQL';
    const ref = findTvf(request.sql, pg);
    if (!ref) return undefined;
    const key = ref.streamName.toLowerCase();
    const stream = streams.get(key);
    const set = sets.get(key);
    if (!stream || !set) {
      if (dropped.has(key))
        throw new SpannerError(Code.NOT_FOUND, `Change Stream not found: ${ref.streamName}`);
      return undefined;
    }
    if (!request.streaming) validateTransport(request.transaction, false);
    const args = bindArguments(
      parseTvfArguments(request.sql, pg, ref),
      request.params,
      request.paramTypes,
      ref.tvfName,
    );
    const nowNs = now();
    validateArguments(
      args,
      { nowNs, createdAtNs: stream.createdAtNs, retentionNs: retentionOf(stream) },
      set,
    );
    validateTransport(request.transaction, true);
    const partition = resolvePartition(args, set);
    const env: ExecEnv = {
      now,
      onChange,
      signal: request.signal,
      checkAlive: () => {
        if (streams.get(key) !== stream)
          throw new SpannerError(Code.NOT_FOUND, `Change Stream not found: ${stream.name}`);
      },
    };
    const startNs = args.startNs ?? nowNs;
    const rows = partition
      ? partitionQuery(
          { partition, partitions: set, startNs, endNs: args.endNs, heartbeatMs: Number(args.heartbeatMs) },
          env,
        )
      : initialQuery(startNs, set, env);
    return { metadata: queryMetadata(pg, ref.tvfName), rows: render(rows, pg) };
  };

  const onCommit = (event: CommitEvent) => {
    seen(event.schema);
    lastCommitNs = event.commitTimestampNs;
    const txId = String(++txCounter);
    for (const [key, stream] of streams) {
      const set = sets.get(key);
      if (!set) continue;
      const owner = (table: string, keyText: string) =>
        set.owner(hashKey(`${table}\u0000${keyText}`), event.commitTimestampNs);
      for (const [partition, records] of buildRecords(stream, event, txId, owner))
        partition.records.push(...records);
      set.expire(event.commitTimestampNs - retentionOf(stream));
    }
    notify();
  };

  const applyDdl = (statement: string, schema: SchemaView, nowNs: bigint): boolean => {
    seen(schema);
    const command = parseChangeStreamDdl(statement);
    if (!command) return false;
    const { created, dropped: gone } = applyCommand(streams, command, schema, nowNs, checkRetention);
    if (created) {
      sets.set(created.name.toLowerCase(), new PartitionSet(created.name, initialPartitions, nowNs));
      dropped.delete(created.name.toLowerCase());
    }
    if (gone) {
      sets.delete(gone.name.toLowerCase());
      dropped.add(gone.name.toLowerCase());
    }
    notify();
    return true;
  };

  const admin: ChangeStreamAdmin = {
    churnNow: churn,
    endQueryAfter: (k, code, message) => {
      faults.push({
        k,
        code,
        message: message ?? `Injected fault: change-stream query ended after ${k} records.`,
      });
    },
    partitions: (only) =>
      [...sets.entries()]
        .filter(([k]) => only === undefined || k === only.toLowerCase())
        .flatMap(([k, set]) =>
          set.all().map((p) => ({
            stream: streams.get(k)?.name ?? k,
            token: p.token,
            startNs: p.startNs,
            endNs: p.endNs,
            parents: [...p.parents],
            children: [...p.children],
            records: p.records.length,
          })),
        ),
    close: () => {
      if (timer) clearInterval(timer);
    },
  };

  return {
    applyDdl,
    onCommit,
    routeQuery,
    informationSchema: (view) => informationSchemaRows(view, [...streams.values()], dialect, lastSchema),
    ddlStatements: () => [...streams.values()].map((s) => renderDdl(s, dialect)),
    admin,
  };
}
