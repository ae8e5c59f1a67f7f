/**
 * Glue between handlers and grpc-js: errors as gRPC statuses, fault injection at the start of each call,
 * and protobuf timestamps.
 */
import type * as grpc from '@grpc/grpc-js';
import { Metadata } from '@grpc/grpc-js';
import type { ActiveFault, FaultInjector } from '../common/faults';
import { sleep } from '../common/faults';
import { Code, SpannerError } from './hooks';

/** A protobuf Timestamp in proto-loader form. */
export interface TimestampJson {
  seconds?: string | number;
  nanos?: number;
}

/** ns → protobuf Timestamp. */
export function toTimestamp(ns: bigint): { seconds: string; nanos: number } {
  const seconds = ns / 1_000_000_000n;
  return { seconds: seconds.toString(), nanos: Number(ns - seconds * 1_000_000_000n) };
}

/** protobuf Timestamp/Duration → ns. */
export function fromTimestamp(t: TimestampJson | null | undefined): bigint {
  return BigInt(t?.seconds ?? 0) * 1_000_000_000n + BigInt(t?.nanos ?? 0);
}

/** Any thrown value → a gRPC error object. */
export function toServiceError(err: unknown): Partial<grpc.ServiceError> {
  if (err instanceof SpannerError) return { code: err.code, details: err.message, message: err.message };
  const message = err instanceof Error ? err.message : String(err);
  return { code: Code.INTERNAL, details: `emulator internal error: ${message}`, message };
}

/** Applies delay and failure of an injected fault; returns the fault when it limits a stream instead. */
export async function applyFault(faults: FaultInjector, method: string): Promise<ActiveFault | undefined> {
  const f = faults.take(method);
  if (!f) return undefined;
  await sleep(f.delayMs ?? 0);
  if (f.afterItems !== undefined || f.items !== undefined) return f;
  if (f.drop) throw new SpannerError(Code.UNAVAILABLE, 'Connection dropped (injected)');
  if (f.code !== undefined && f.code !== Code.OK)
    throw new SpannerError(f.code, f.message ?? `Injected fault on ${method}`);
  return undefined;
}

/** Wraps an async unary handler. */
export function unary<Req, Res>(
  faults: FaultInjector,
  method: string,
  fn: (req: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res> | Res,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    applyFault(faults, method)
      .then(() => fn(call.request, call))
      .then((res) => callback(null, res))
      .catch((err: unknown) => callback(toServiceError(err) as grpc.ServiceError));
  };
}

/** Wraps an async server-streaming handler; `fault` limits how many items it may write. */
export function streaming<Req, Res>(
  faults: FaultInjector,
  method: string,
  fn: (req: Req, call: grpc.ServerWritableStream<Req, Res>, fault?: ActiveFault) => Promise<void>,
): grpc.handleServerStreamingCall<Req, Res> {
  return (call) => {
    // Send response headers first, as the service's front end does. Without them an error arrives before
    // any response, and the client's stream layer treats it as "no response" and retries it silently
    // (twice, seconds apart) instead of surfacing it or resuming with the resume token.
    call.sendMetadata(new Metadata());
    applyFault(faults, method)
      .then((fault) => fn(call.request, call, fault))
      .then(() => call.end())
      .catch((err: unknown) => {
        if (!call.cancelled) call.emit('error', toServiceError(err));
      });
  };
}
