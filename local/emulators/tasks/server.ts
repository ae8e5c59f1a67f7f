/**
 * The gRPC server: registers every CloudTasks method, applying fault rules (keyed by method name, e.g.
 * `CreateTask`) before the handler runs. gRPC offers a server no way to cut one call's connection, so a
 * `drop` rule answers UNAVAILABLE, which is what the client sees when a connection is lost.
 */
import type { FaultInjector } from '../common/faults';
import { type GrpcServer, startUnaryGrpc } from '../common/grpc-unary';
import { cloudTasksService } from './proto';
import type { Handler } from './service';
import { TasksError } from './wire';

/** Starts the server on loopback; resolves to its `host:port` and a stop function. */
export async function startTasksGrpc(
  handlers: Record<string, Handler>,
  faults: FaultInjector,
  port: number,
): Promise<GrpcServer> {
  return startUnaryGrpc(cloudTasksService(), handlers, faults, port, TasksError);
}
