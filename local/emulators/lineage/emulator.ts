/**
 * Programmatic start of the Data Lineage API emulator: `startLineageEmulator({port: 0})` gives the gRPC
 * address, a ready-wired official `LineageClient`, an admin handle (raw events received, column edges,
 * faults) and `stop()`. The optional admin HTTP endpoint serves the same as `GET /events` and `GET /edges`.
 */
import { LineageClient } from '@google-cloud/lineage';
import type { Json } from '../../../shared/domain/lineage/struct';
import { startAdminServerIfAsked } from '../common/admin-http';
import { type ActiveFault, FaultInjector, type FaultRule, sleep } from '../common/faults';
import { servedOnLoopback } from '../common/grpc-clients';
import { LineagePersistence } from './persist';
import { startLineageGrpc } from './server';
import { LineageState, type ReceivedEvent } from './state';

/** Start options. */
export interface LineageEmulatorOptions {
  /** gRPC port; 0 (default) picks a free one. */
  port?: number;
  /** Admin HTTP endpoint port (0 picks one); `false` (default) starts none. */
  adminPort?: number | false;
  /** Keep processes, runs and events in this directory across restarts (absent: in memory). */
  dataDir?: string;
}

/** One column-level edge received: `source` and `target` as `<fully qualified name>.<column>`. */
export interface ReceivedEdge {
  source: string;
  target: string;
}

/** Inspection and fault injection, in-process. */
export interface LineageAdmin {
  /** Adds a fault rule; `method` is a gRPC method such as `ProcessOpenLineageRunEvent`. */
  fail(rule: FaultRule): number;
  clearFaults(id?: number): void;
  faults(): ActiveFault[];
  /** Every OpenLineage event accepted, in arrival order. */
  events(): ReceivedEvent[];
  /** Distinct column-level edges over every event received, in first-seen order. */
  edges(): ReceivedEdge[];
  /** Resolves once `predicate` holds (polled every 10 ms; rejects after `timeoutMs`). */
  waitFor(predicate: () => boolean, timeoutMs?: number): Promise<void>;
}

/** A running emulator. */
export interface LineageEmulator {
  /** `127.0.0.1:port` of the gRPC endpoint. */
  address: string;
  port: number;
  adminUrl?: string | undefined;
  /** A new official client pointed at the emulator (insecure channel, no auth). */
  client(): LineageClient;
  admin: LineageAdmin;
  stop(): Promise<void>;
}

function edgesOf(state: LineageState): ReceivedEdge[] {
  const seen = new Map<string, ReceivedEdge>();
  for (const e of state.events) {
    for (const l of e.links) {
      if (!l.source.field || !l.target.field) continue;
      const edge = {
        source: `${l.source.fullyQualifiedName}.${l.source.field.join('.')}`,
        target: `${l.target.fullyQualifiedName}.${l.target.field.join('.')}`,
      };
      seen.set(`${edge.source} ${edge.target}`, edge);
    }
  }
  return [...seen.values()];
}

async function waitFor(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(10);
  }
}

/** Starts the emulator on loopback. */
export async function startLineageEmulator(options: LineageEmulatorOptions = {}): Promise<LineageEmulator> {
  const state = new LineageState();
  const persistence = options.dataDir ? new LineagePersistence(options.dataDir, state) : undefined;
  persistence?.load();
  const faults = new FaultInjector();
  const admin: LineageAdmin = {
    fail: (rule) => faults.add(rule),
    clearFaults: (id) => faults.clear(id),
    faults: () => faults.list(),
    events: () => state.received.map((e) => ({ ...e, openLineage: structuredClone(e.openLineage) })),
    edges: () => edgesOf(state),
    waitFor,
  };
  const grpc = await startLineageGrpc(state, faults, options.port ?? 0);
  const adminServer = await startAdminServerIfAsked(options.adminPort, faults, {
    'GET /events': () => admin.events() as unknown as Json,
    'GET /edges': () => admin.edges(),
  });
  const served = servedOnLoopback(grpc, adminServer, (o) => new LineageClient(o));
  return {
    ...served,
    admin,
    stop: async () => {
      await served.stop();
      persistence?.close();
    },
  };
}
