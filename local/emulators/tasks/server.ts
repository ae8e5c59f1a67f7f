/**
 * The gRPC server: registers every CloudTasks method, applying fault rules (keyed by method name, e.g.
 * `CreateTask`) before the handler runs. gRPC offers a server no way to cut one call's connection, so a
 * `drop` rule answers UNAVAILABLE, which is what the client sees when a connection is lost.
 */
import { Server, ServerCredentials, type UntypedServiceImplementation } from '@grpc/grpc-js';
import type { FaultInjector } from '../common/faults';
import { unaryWithFaults } from '../common/grpc-unary';
import { cloudTasksService } from './proto';
import type { Handler } from './service';
import { TasksError } from './wire';

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
    if (handler) impl[key] = unaryWithFaults(name, handler, faults, TasksError);
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
