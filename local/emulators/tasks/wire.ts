/**
 * Conversions between the plain objects proto-loader produces (int64 as strings) and the emulator's
 * millisecond numbers, plus the gRPC error type the handlers throw.
 */
import type { status } from '@grpc/grpc-js';

/** An error answered with a gRPC status. */
export class TasksError extends Error {
  constructor(
    readonly code: status,
    message: string,
  ) {
    super(message);
    this.name = 'TasksError';
  }
}

/** `google.protobuf.Duration` / `Timestamp` as proto-loader gives them. */
export interface SecondsNanos {
  seconds?: string | number | null;
  nanos?: number | null;
}

/** Milliseconds (fractional) of a Duration or Timestamp; undefined when absent. */
export function toMs(value: SecondsNanos | null | undefined): number | undefined {
  if (!value) return undefined;
  return Number(value.seconds ?? 0) * 1000 + (value.nanos ?? 0) / 1e6;
}

/** A Duration or Timestamp from milliseconds, truncated to microseconds as Cloud Tasks does. */
export function fromMs(ms: number): { seconds: string; nanos: number } {
  const micros = Math.floor(ms * 1000);
  const seconds = Math.floor(micros / 1_000_000);
  return { seconds: String(seconds), nanos: (micros - seconds * 1_000_000) * 1000 };
}

/** Milliseconds since the epoch with microsecond resolution (two `Date.now()` in one ms differ). */
export function nowMs(): number {
  return Number(process.hrtime.bigint() - HR_ORIGIN) / 1e6 + WALL_ORIGIN;
}

const HR_ORIGIN = process.hrtime.bigint();
const WALL_ORIGIN = Date.now();
