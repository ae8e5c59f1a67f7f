/**
 * One unary gRPC method of an emulator: the fault rules for the method (keyed by its name) apply before the
 * handler runs; the service's own errors answer with their code, anything else INTERNAL. gRPC offers a server
 * no way to cut one call's connection, so a `drop` rule answers UNAVAILABLE, as a lost connection looks to
 * the client.
 */
import {
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServiceDefinition,
  type ServiceError,
  type sendUnaryData,
  status,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { type FaultInjector, sleep } from './faults';

/** A request as the proto loader decodes it. */
export type UnaryRequest = Record<string, unknown>;

/** The error an emulator's service throws with a gRPC code (its own class). */
export type CodedError = new (...args: never[]) => Error & { code: number };

function serviceError(code: number, message: string): Partial<ServiceError> {
  return { code, details: message, message };
}

/** The gRPC implementation of `method`, answering through `handler` unless a fault rule strikes first. */
export function unaryWithFaults(
  method: string,
  handler: (req: UnaryRequest) => unknown,
  faults: FaultInjector,
  ServiceErrorClass: CodedError,
) {
  return (call: ServerUnaryCall<UnaryRequest, unknown>, callback: sendUnaryData<unknown>) => {
    const run = async () => {
      const fault = faults.take(method);
      if (fault?.delayMs) await sleep(fault.delayMs);
      if (fault?.drop) return callback(serviceError(status.UNAVAILABLE, 'connection dropped (injected)'));
      if (fault?.code !== undefined)
        return callback(serviceError(fault.code, fault.message ?? 'injected fault'));
      callback(null, handler(call.request));
    };
    run().catch((err: unknown) => {
      if (err instanceof ServiceErrorClass) callback(serviceError(err.code, err.message));
      else callback(serviceError(status.INTERNAL, err instanceof Error ? err.message : String(err)));
    });
  };
}

/** A running gRPC server of an emulator. */
export interface GrpcServer {
  address: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Starts `service` on loopback `port` (0: any free one) with every method that has a handler in `handlers`
 * (keyed by the method's short name) wrapped by {@link unaryWithFaults}; the others answer UNIMPLEMENTED.
 */
export async function startUnaryGrpc(
  service: ServiceDefinition,
  handlers: Record<string, ((req: UnaryRequest) => unknown) | undefined>,
  faults: FaultInjector,
  port: number,
  ServiceErrorClass: CodedError,
): Promise<GrpcServer> {
  const impl: UntypedServiceImplementation = {};
  for (const [key, def] of Object.entries(service)) {
    const name = def.path.slice(def.path.lastIndexOf('/') + 1);
    const handler = handlers[name];
    if (handler) impl[key] = unaryWithFaults(name, handler, faults, ServiceErrorClass);
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
