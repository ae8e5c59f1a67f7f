/**
 * The `google.cloud.bigquery.storage.v1.BigQueryWrite` gRPC server: unary stream management calls plus the
 * AppendRows stream (see append-rows.ts). Every unary call consults the fault rules under its method name.
 */
import * as grpc from '@grpc/grpc-js';
import { type FaultInjector, sleep } from '../common/faults';
import { type AppendRequest, appendRowsHandler } from './append-rows';
import { encodeStorageError, loadWriteService } from './protos';
import { toStorageFields } from './schema';
import {
  Code,
  isDefaultStream,
  nowNs,
  type StreamType,
  WriteError,
  type WriteStreams,
} from './write-streams';

/** What the gRPC server needs. */
export interface GrpcDeps {
  streams: WriteStreams;
  faults: FaultInjector;
  maxRequestBytes: number;
}

/** A started gRPC server. */
export interface GrpcServer {
  address: string;
  port: number;
  stop(): Promise<void>;
}

function timestamp(ns: bigint | undefined): Record<string, unknown> | undefined {
  if (ns === undefined) return undefined;
  return { seconds: String(ns / 1_000_000_000n), nanos: Number(ns % 1_000_000_000n) };
}

type Unary = (req: Record<string, unknown>) => Record<string, unknown>;

function unary(
  faults: FaultInjector,
  method: string,
  fn: Unary,
): grpc.handleUnaryCall<Record<string, unknown>, unknown> {
  return (call, callback) => {
    const fault = faults.take(method);
    void sleep(fault?.delayMs ?? 0).then(() => {
      if (fault?.code) return callback({ code: fault.code, details: fault.message ?? 'Injected failure' });
      try {
        const response = fn(call.request);
        for (const field of fault?.omit ?? []) delete response[field];
        callback(null, response);
      } catch (err) {
        if (!(err instanceof WriteError))
          return callback({ code: grpc.status.INTERNAL, details: String(err) });
        const metadata = new grpc.Metadata();
        if (err.storageCode !== undefined) {
          metadata.set(
            'google.cloud.bigquery.storage.v1.storageerror-bin',
            encodeStorageError(err.storageCode, err.entity, err.message),
          );
        }
        callback({ code: err.code, details: err.message, metadata });
      }
    });
  };
}

function streamTypeOf(value: unknown): StreamType {
  if (value === 'PENDING' || value === 'BUFFERED' || value === 'COMMITTED') return value;
  throw new WriteError(Code.INVALID_ARGUMENT, `Invalid write stream type: ${String(value)}`);
}

function handlers(
  deps: GrpcDeps,
  track: (call: grpc.ServerDuplexStream<AppendRequest, unknown>) => () => void,
): grpc.UntypedServiceImplementation {
  const { streams, faults } = deps;
  return {
    CreateWriteStream: unary(faults, 'CreateWriteStream', (req) => {
      const ws = (req.writeStream ?? {}) as { type?: unknown };
      const s = streams.create(String(req.parent ?? ''), streamTypeOf(ws.type));
      return {
        name: s.name,
        type: s.type,
        createTime: timestamp(s.createTimeNs),
        commitTime: timestamp(s.commitTimeNs),
        tableSchema: { fields: toStorageFields(s.table.fields) },
        writeMode: 'INSERT',
        location: 'US',
      };
    }),
    GetWriteStream: unary(faults, 'GetWriteStream', (req) => {
      const name = String(req.name ?? '');
      const s = streams.get(name);
      const table = s?.table ?? streams.tableOf(name);
      const full = req.view === 'FULL';
      const createNs = s?.createTimeNs ?? BigInt(table.creationTimeMs) * 1_000_000n;
      return {
        name: s?.name ?? `${table.path()}/streams/_default`,
        type: s?.type ?? 'COMMITTED',
        createTime: timestamp(createNs),
        commitTime: timestamp(s ? s.commitTimeNs : createNs),
        ...(full ? { tableSchema: { fields: toStorageFields(table.fields) } } : {}),
        writeMode: 'INSERT',
        location: 'US',
      };
    }),
    FinalizeWriteStream: unary(faults, 'FinalizeWriteStream', (req) => ({
      rowCount: String(streams.finalize(String(req.name ?? ''))),
    })),
    BatchCommitWriteStreams: unary(faults, 'BatchCommitWriteStreams', (req) => {
      const names = (req.writeStreams as string[] | undefined) ?? [];
      const errors = streams.batchCommit(String(req.parent ?? ''), names);
      return errors.length > 0
        ? { streamErrors: errors }
        : { commitTime: timestamp(nowNs()), streamErrors: [] };
    }),
    FlushRows: unary(faults, 'FlushRows', (req) => {
      const offset = (req.offset as { value?: string } | undefined)?.value ?? '0';
      const name = String(req.writeStream ?? '');
      if (isDefaultStream(name))
        throw new WriteError(
          Code.INVALID_ARGUMENT,
          `FlushRows is not supported on the default stream. Entity: ${name}`,
        );
      return { offset: String(streams.flush(name, BigInt(offset))) };
    }),
    AppendRows: appendRowsHandler({ ...deps, track }),
  };
}

/** Starts the gRPC server on 127.0.0.1. */
export async function startGrpcServer(deps: GrpcDeps, port: number): Promise<GrpcServer> {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
    // The managed writer pings every 30 s; never answer its keepalives with GOAWAY too_many_pings.
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.http2.min_ping_interval_without_data_ms': 1000,
  });
  const live = new Set<grpc.ServerDuplexStream<AppendRequest, unknown>>();
  const track = (call: grpc.ServerDuplexStream<AppendRequest, unknown>) => {
    live.add(call);
    return () => live.delete(call);
  };
  server.addService(loadWriteService(), handlers(deps, track));
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    address: `127.0.0.1:${bound}`,
    port: bound,
    stop: async () => {
      for (const call of live) call.end();
      live.clear();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.forceShutdown(), 1000);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
