/**
 * Programmatic start of the BigQuery emulator (Storage Write gRPC + REST), with an admin handle for fault
 * injection and inspection, and factories for ready-wired official clients.
 */
import { BigQuery } from '@google-cloud/bigquery';
import { managedwriter } from '@google-cloud/bigquery-storage';
import { grpc as gaxGrpc } from 'google-gax';
import { startAdminServerIfAsked } from '../common/admin-http';
import { FaultInjector } from '../common/faults';
import { Catalog, type TableRef } from './catalog';
import { startGrpcServer } from './grpc-server';
import { BigQueryPersistence } from './persist';
import { startRestServer } from './rest-server';
import { type CreateStreamQuota, parseCreateStreamQuota } from './stream-quota';
import type { Ingestion } from './table-state';
import type { Row } from './values';
import { type StreamInfo, WriteStreams } from './write-streams';

/** Options of {@link startBigQueryEmulator}. */
export interface BigQueryEmulatorOptions {
  /** gRPC (Storage Write) port; 0 picks a free one. */
  grpcPort?: number;
  /** REST port; 0 picks a free one. */
  restPort?: number;
  /** Admin HTTP port; omitted means no admin HTTP endpoint (the handle still works). */
  adminPort?: number;
  /** Default project for the client factories. */
  projectId?: string;
  /**
   * AppendRows request size limit in bytes: BigQuery documents 20 MB and answers a larger request in-band
   * with INVALID_ARGUMENT `AppendRows request too large: <n> limit 20971520` (bigquery-storage-write.md §2.5, §3.5).
   */
  maxRequestBytes?: number;
  /** CreateWriteStream calls allowed per window (BigQuery documents 10,000 per hour per project). */
  createStreamQuota?: CreateStreamQuota;
  /** Keep datasets, tables, rows and write streams in this directory across restarts (default: memory). */
  dataDir?: string;
}

/** Fault injection and inspection. */
export interface BigQueryAdmin {
  faults: FaultInjector;
  /** The next `n` AppendRows requests are answered in-band with `code` (rows are not written). */
  failNextAppends(n: number, code: number, message?: string): number;
  /** The next `connections` AppendRows connections end with `code` (default UNAVAILABLE) after `k` responses. */
  endAppendStreamAfter(k: number, code?: number, connections?: number): number;
  /** Delays the next `times` AppendRows responses by `ms`. */
  delayAppends(ms: number, times?: number): number;
  clearFaults(): void;
  /** Table contents as applied (CDC resolved), in ingestion order. */
  tableRows(datasetId: string, tableId: string, projectId?: string): Row[];
  /** Every row ever ingested into the table, with change type, sequence number and whether it applied. */
  ingestionHistory(datasetId: string, tableId: string, projectId?: string): Ingestion[];
  /** The explicit write streams of a table with their row counts and states (no API returns a row count). */
  writeStreams(datasetId: string, tableId: string, projectId?: string): StreamInfo[];
  /** Explicit streams created since the emulator started (every table, every project). */
  streamsCreated(): number;
  /** Replaces the CreateWriteStream quota (counting creations already made within the window). */
  setCreateStreamQuota(quota: CreateStreamQuota): void;
  /** Forgets a stream as BigQuery does after three idle days; false when there was none. */
  expireWriteStream(name: string): boolean;
}

/** A running emulator. */
export interface BigQueryEmulator {
  grpcAddress: string;
  grpcPort: number;
  restUrl: string;
  adminUrl?: string;
  projectId: string;
  admin: BigQueryAdmin;
  /** A `BigQuery` client pointed at the REST endpoint. */
  bigquery(): BigQuery;
  /** A managed-writer `WriterClient` pointed at the gRPC endpoint (closed by `stop()`). */
  writerClient(): managedwriter.WriterClient;
  stop(): Promise<void>;
}

function makeAdmin(
  catalog: Catalog,
  streams: WriteStreams,
  faults: FaultInjector,
  projectId: string,
): BigQueryAdmin {
  const ref = (datasetId: string, tableId: string, p?: string): TableRef => ({
    projectId: p ?? projectId,
    datasetId,
    tableId,
  });
  return {
    faults,
    failNextAppends: (n, code, message) =>
      faults.add({ method: 'AppendRows', times: n, code, ...(message ? { message } : {}) }),
    endAppendStreamAfter: (k, code, connections = 1) =>
      faults.add({
        method: 'AppendRowsStream',
        times: connections,
        afterItems: k,
        ...(code ? { code } : {}),
      }),
    delayAppends: (ms, times = Number.POSITIVE_INFINITY) =>
      faults.add({ method: 'AppendRows', times, delayMs: ms }),
    clearFaults: () => faults.clear(),
    tableRows: (d, t, p) => catalog.table(ref(d, t, p)).rows(),
    ingestionHistory: (d, t, p) => [...catalog.table(ref(d, t, p)).state.history],
    writeStreams: (d, t, p) => streams.list(catalog.table(ref(d, t, p))),
    streamsCreated: () => streams.quota.total,
    setCreateStreamQuota: (quota) => {
      streams.quota.limits = quota;
    },
    expireWriteStream: (name) => streams.expire(name),
  };
}

function jsonSafe(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
}

/** Starts the emulator on 127.0.0.1. */
export async function startBigQueryEmulator(
  options: BigQueryEmulatorOptions = {},
): Promise<BigQueryEmulator> {
  const projectId = options.projectId ?? 'test-project';
  const catalog = new Catalog();
  const faults = new FaultInjector();
  const streams = new WriteStreams(catalog, options.createStreamQuota);
  const persistence = options.dataDir
    ? new BigQueryPersistence(options.dataDir, catalog, streams)
    : undefined;
  persistence?.load();
  const grpcServer = await startGrpcServer(
    { streams, faults, maxRequestBytes: options.maxRequestBytes ?? 20 * 1024 * 1024 },
    options.grpcPort ?? 0,
  );
  const rest = await startRestServer(catalog, streams, faults, options.restPort ?? 0);
  const admin = makeAdmin(catalog, streams, faults, projectId);
  const q = (url: URL) =>
    [
      url.searchParams.get('dataset') ?? '',
      url.searchParams.get('table') ?? '',
      url.searchParams.get('project') ?? undefined,
    ] as const;
  const adminServer = await startAdminServerIfAsked(options.adminPort, faults, {
    'GET /tables/rows': (_b, url) => jsonSafe(admin.tableRows(...q(url))),
    'GET /tables/history': (_b, url) => jsonSafe(admin.ingestionHistory(...q(url))),
    'GET /tables/streams': (_b, url) => admin.writeStreams(...q(url)),
    'POST /streams/expire': (b) => ({
      expired: admin.expireWriteStream(String((b as { name?: unknown })?.name)),
    }),
    'POST /quota/create-write-stream': (b) => {
      const { limit, windowMs } = (b ?? {}) as { limit?: unknown; windowMs?: unknown };
      const quota = parseCreateStreamQuota(
        `${String(limit)}${windowMs === undefined ? '' : `/${String(windowMs)}`}`,
      );
      admin.setCreateStreamQuota(quota);
      return quota;
    },
  });
  const writers: managedwriter.WriterClient[] = [];
  return {
    grpcAddress: grpcServer.address,
    grpcPort: grpcServer.port,
    restUrl: rest.url,
    ...(adminServer ? { adminUrl: adminServer.url } : {}),
    projectId,
    admin,
    bigquery: () => new BigQuery({ projectId, apiEndpoint: rest.url }),
    writerClient: () => {
      const client = new managedwriter.WriterClient({
        projectId,
        apiEndpoint: '127.0.0.1',
        port: grpcServer.port,
        sslCreds: gaxGrpc.credentials.createInsecure(),
      });
      writers.push(client);
      return client;
    },
    stop: async () => {
      for (const w of writers.splice(0)) w.close();
      await Promise.all([grpcServer.stop(), rest.stop(), adminServer?.stop()]);
      persistence?.close();
    },
  };
}
