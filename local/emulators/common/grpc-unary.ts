/**
 * One unary gRPC method of an emulator: the fault rules for the method (keyed by its name) apply before the
 * handler runs; the service's own errors answer with their code, anything else INTERNAL. gRPC offers a server
 * no way to cut one call's connection, so a `drop` rule answers UNAVAILABLE, as a lost connection looks to
 * the client.
 */
import { type ServerUnaryCall, type ServiceError, type sendUnaryData, status } from '@grpc/grpc-js';
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
