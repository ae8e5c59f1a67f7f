/**
 * Programmatic start of the Spanner emulator: one gRPC server for the Spanner, InstanceAdmin,
 * DatabaseAdmin and Operations services, plus the shared JSON admin endpoint for fault injection.
 */
import * as grpc from '@grpc/grpc-js';
import { type AdminServer, startAdminServer } from '../common/admin-http';
import type { FaultInjector } from '../common/faults';
import type { BatchWriteRecord } from './batch-write';
import {
  type ChangeStreamControls,
  type ChangeStreamOptions,
  wireChangeStreams,
} from './change-stream-wiring';
import type { EmulatedDatabase, WriteLimits } from './database';
import { MAX_MESSAGE_BYTES } from './limits';
import { SpannerPersistence } from './persist';
import { loadServices } from './protos';
import { SERVER_RECEIVE_BYTES, withRequestLimit } from './request-size';
import { databaseAdminHandlers, instanceAdminHandlers, operationsHandlers } from './rpc-admin';
import { queryHandlers } from './rpc-queries';
import { sessionHandlers } from './rpc-sessions';
import { type EmulatorOptions, EmulatorState } from './state';
import type { Dialect } from './tokenizer';

/** Options of `startSpannerEmulator`. */
export interface StartOptions extends Omit<EmulatorOptions, 'changeStreams'>, ChangeStreamOptions {
  /** gRPC port; 0 picks a free one. */
  port?: number;
  /** Admin HTTP port; 0 picks a free one (default 0). */
  adminPort?: number;
  /** Keep instances, databases, data and change streams in this directory across restarts (default: memory). */
  dataDir?: string;
}

/** Inspection and fault-injection handle (change-stream controls included). */
export interface SpannerAdminHandle extends ChangeStreamControls {
  faults: FaultInjector;
  /** Creates an instance and database directly (no RPC), e.g. for `--database`. */
  createDatabase(name: string, dialect?: Dialect): EmulatedDatabase;
  /** A database by full name. */
  database(name: string): EmulatedDatabase;
  /** Whether a database exists (e.g. restored from `dataDir`). */
  hasDatabase(name: string): boolean;
  /** Current emulator time in ns. */
  nowNs(): bigint;
  /** Number of open sessions. */
  sessionCount(): number;
  /** BatchWrite requests seen (of one database, or all), oldest first. */
  batchWrites(database?: string): BatchWriteRecord[];
  clearBatchWrites(): void;
  /** How often each row (`Table [key…]`) was committed by BatchWrite: confirmed and unreported alike. */
  batchWriteCommits(database?: string): Map<string, number>;
  /** Changes the write limits of every database. */
  setLimits(limits: Partial<WriteLimits>): WriteLimits;
}

/** A running emulator. */
export interface RunningSpannerEmulator {
  /** `127.0.0.1:<port>`, the value for SPANNER_EMULATOR_HOST. */
  address: string;
  port: number;
  adminUrl: string;
  admin: SpannerAdminHandle;
  stop(): Promise<void>;
}

/** Commits per row over BatchWrite records. */
function commitsByRow(records: BatchWriteRecord[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of records)
    for (const o of r.outcomes)
      if (o.code === 0) for (const row of o.rows) counts.set(row, (counts.get(row) ?? 0) + 1);
  return counts;
}

function adminHandle(state: EmulatorState, changeStreams: ChangeStreamControls): SpannerAdminHandle {
  return {
    ...changeStreams,
    faults: state.faults,
    createDatabase(name, dialect = 'GOOGLE_STANDARD_SQL') {
      const instance = name.split('/databases/')[0] as string;
      if (!state.instances.has(instance)) state.createInstance(instance, 'emulator-config');
      return state.createDatabase(name, dialect);
    },
    database: (name) => state.database(name),
    hasDatabase: (name) => state.databases.has(name),
    nowNs: () => state.clock.nowNs(),
    sessionCount: () => state.sessions.size,
    batchWrites: (database) => state.batchWrites.list(database),
    clearBatchWrites: () => state.batchWrites.clear(),
    batchWriteCommits: (database) => commitsByRow(state.batchWrites.list(database)),
    setLimits: (limits) => Object.assign(state.limits, limits),
  };
}

/** Starts the emulator on 127.0.0.1. */
export async function startSpannerEmulator(options: StartOptions = {}): Promise<RunningSpannerEmulator> {
  const services = loadServices();
  let persistence: SpannerPersistence | undefined;
  // The engines' clock is the core's commit clock, so churn and heartbeats agree with commit timestamps.
  const wiring = wireChangeStreams(
    options,
    () => state.clock.nowNs(),
    (db, atNs, stream) => persistence?.churned(db, atNs, stream),
  );
  const state: EmulatorState = new EmulatorState({
    partitions: options.partitions,
    partitionBytes: options.partitionBytes,
    changeStreams: wiring.factory,
    ...(options.mutationsPerCommit ? { mutationsPerCommit: options.mutationsPerCommit } : {}),
  });
  if (options.dataDir) {
    persistence = new SpannerPersistence(options.dataDir, state, (db) =>
      wiring.controls.changeStreamEngine(db),
    );
    persistence.load();
  }
  // grpc-js receives 4 MiB by default; the service takes requests of 100 MiB and answers larger ones itself.
  const server = new grpc.Server({
    'grpc.max_receive_message_length': Math.max(SERVER_RECEIVE_BYTES, MAX_MESSAGE_BYTES),
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  });
  const spanner = withRequestLimit(services.spanner, { ...sessionHandlers(state), ...queryHandlers(state) }, [
    // Both carry a transaction's mutations (a mutation-only BeginTransaction its mutation key) and answer
    // the service's commit-size error themselves (limits.ts).
    'BeginTransaction',
    'Commit',
  ]);
  server.addService(spanner.service, spanner.handlers);
  server.addService(services.instanceAdmin, instanceAdminHandlers(state, services));
  server.addService(services.databaseAdmin, databaseAdminHandlers(state, services));
  server.addService(services.operations, operationsHandlers(state));
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${options.port ?? 0}`, grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  const admin = adminHandle(state, wiring.controls);
  const http: AdminServer = await startAdminServer(options.adminPort ?? 0, state.faults, {
    ...wiring.routes,
    'GET /databases': () => [...state.databases.keys()],
    'POST /databases': (body) => {
      const b = body as { name: string; dialect?: Dialect };
      admin.createDatabase(b.name, b.dialect);
      return { name: b.name };
    },
    'GET /batch-writes': (_body, url) => admin.batchWrites(url.searchParams.get('database') ?? undefined),
    'DELETE /batch-writes': () => {
      admin.clearBatchWrites();
      return {};
    },
    'POST /limits': (body) => admin.setLimits(body as Partial<WriteLimits>),
  });
  return {
    address: `127.0.0.1:${port}`,
    port,
    adminUrl: http.url,
    admin,
    stop: async () => {
      wiring.close();
      await http.stop();
      server.forceShutdown();
      persistence?.close();
    },
  };
}
