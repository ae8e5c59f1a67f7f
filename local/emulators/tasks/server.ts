/**
 * The gRPC server: registers every CloudTasks method, applying fault rules (keyed by method name, e.g.
 * `CreateTask`) before the handler runs. gRPC offers a server no way to cut one call's connection, so a
 * `drop` rule answers UNAVAILABLE, which is what the client sees when a connection is lost.
 */
import {
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServiceError,
  type sendUnaryData,
  status,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { type FaultInjector, sleep } from '../common/faults';
import { cloudTasksService } from './proto';
import type { Handler, Req } from './service';
import { TasksError } from './wire';

function serviceError(code: number, message: string): Partial<ServiceError> {
  return { code, details: message, message };
}

function wrap(method: string, handler: Handler, faults: FaultInjector) {
  return (call: ServerUnaryCall<Req, unknown>, callback: sendUnaryData<unknown>) => {
    const run = async () => {
      const fault = faults.take(method);
      if (fault?.delayMs) await sleep(fault.delayMs);
      if (fault?.drop) return callback(serviceError(status.UNAVAILABLE, 'connection dropped (injected)'));
      if (fault?.code !== undefined)
        return callback(serviceError(fault.code, fault.message ?? 'injected fault'));
      callback(null, handler(call.request));
    };
    run().catch((err: unknown) => {
      if (err instanceof TasksError) callback(serviceError(err.code, err.message));
      else callback(serviceError(status.INTERNAL, err instanceof Error ? err.message : String(err)));
    });
  };
}

/** Starts the server on loopback; resolves to its `host:port` and a stop function. */
export async function startTasksGrpc(
  handlers: Record<string, Handler>,
  faults: FaultInjector,
  port: number,
): Promise<{ address: string; port: number; stop(): Promise<void> }> {
  const service = cloudTasksService();
  const impl: UntypedServiceImplementation = {};
  for (const [key, def] of Object.entries(service)) {
    const name = def.path.slice(def.path.lastIndexOf('/') + 1);
    const handler = handlers[name];
    if (handler) impl[key] = wrap(name, handler, faults);
  }
  const server = new Server();
  server.addService(service, impl);
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    address: `127.0.0.1:${bound}`,
    port: bound,
    stop: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => server.forceShutdown(), 1000).unref();
      }),
  };
}
