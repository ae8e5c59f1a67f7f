/**
 * The service's request size limit. Spanner's front end refuses a request above 100 MiB (104,857,600 bytes)
 * with INVALID_ARGUMENT naming the limit, before any of it is applied; grpc-js would otherwise refuse any
 * message above its 4 MiB default with RESOURCE_EXHAUSTED, a code a client rightly retries. So the server
 * receives messages well above the limit, and each call of the Spanner service whose request is over it is
 * answered the service's error instead of running — except methods that check their own limit (Commit counts
 * its mutation data and answers the service's commit-size error, see limits.ts).
 */
import * as grpc from '@grpc/grpc-js';
import { Code } from './hooks';

/** The service's limit on one request, in bytes. */
export const MAX_REQUEST_BYTES = 100 * 1024 * 1024;

/** The server's receive limit: above the service's, so that requests over it reach the check below. */
export const SERVER_RECEIVE_BYTES = 256 * 1024 * 1024;

/** The service's answer to a request over the limit. */
export function requestTooLarge(): Partial<grpc.ServiceError> {
  const message = `Request payload size exceeds the limit: ${MAX_REQUEST_BYTES} bytes.`;
  return { code: Code.INVALID_ARGUMENT, details: message, message };
}

type Handler = (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => void;

/**
 * The service definition and handlers with the size check in front of every method: the deserializer
 * remembers each request's wire size, and a handler whose request is over the limit answers the error.
 */
export function withRequestLimit(
  service: grpc.ServiceDefinition,
  handlers: grpc.UntypedServiceImplementation,
  exempt: readonly string[] = [],
): { service: grpc.ServiceDefinition; handlers: grpc.UntypedServiceImplementation } {
  const sizes = new WeakMap<object, number>();
  const wrapped: grpc.UntypedServiceImplementation = {};
  const limited: grpc.ServiceDefinition = Object.fromEntries(
    Object.entries(service).map(([name, def]) => [
      name,
      {
        ...def,
        requestDeserialize: (bytes: Buffer) => {
          const request = def.requestDeserialize(bytes);
          if (request && typeof request === 'object') sizes.set(request as object, bytes.length);
          return request;
        },
      },
    ]),
  );
  for (const [name, def] of Object.entries(service)) {
    const handler = handlers[name] as Handler | undefined;
    if (!handler) continue;
    if (exempt.includes(name)) {
      wrapped[name] = handler as grpc.UntypedHandleCall;
      continue;
    }
    wrapped[name] = ((
      call: grpc.ServerUnaryCall<unknown, unknown>,
      callback: grpc.sendUnaryData<unknown>,
    ) => {
      const size = sizes.get(call.request as object) ?? 0;
      if (size <= MAX_REQUEST_BYTES) return handler(call, callback);
      const error = requestTooLarge() as grpc.ServiceError;
      if (!def.responseStream) return callback(error);
      // Headers first, as the other streaming handlers send them (an error before any makes the client's
      // stream layer retry silently).
      call.sendMetadata(new grpc.Metadata());
      call.emit('error', error);
    }) as grpc.UntypedHandleCall;
  }
  return { service: limited, handlers: wrapped };
}
