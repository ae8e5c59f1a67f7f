/**
 * `MutationSink` on Cloud Spanner: one `batchWriteAtLeastOnce` call, one mutation per mutation group, so the
 * service reports a status per mutation. The client does not retry this RPC (nor should it: the writer
 * decides which groups to re-send), so a failed call is returned, not thrown, with the reports that came
 * before it. Each call is bounded by its own timer as well as the gRPC deadline, so a stalled stream ends.
 */
import { type Database, MutationGroup } from '@google-cloud/spanner';
import { GrpcCode } from '../../domain/errors';
import { fromSecondsAndNanos } from '../../domain/timestamp';
import type { TypedMutation } from '../../domain/writer/mutations';
import type { GroupStatus } from '../../domain/writer/policy';
import type { WireValue } from '../../domain/writer/values';
import type {
  BatchWriteOptions,
  BatchWriteResult,
  GroupReport,
  MutationSink,
} from '../../ports/mutation-sink';

/** A response as the client streams it (`google.spanner.v1.BatchWriteResponse`). */
interface BatchWriteResponse {
  indexes?: number[] | null;
  status?: { code?: number | null; message?: string | null } | null;
  commitTimestamp?: { seconds?: unknown; nanos?: number | null } | null;
}

/** `google.protobuf.Value` as the request carries it. */
type ProtoValue =
  | { nullValue: 'NULL_VALUE' }
  | { boolValue: boolean }
  | { numberValue: number }
  | { stringValue: string }
  | { listValue: { values: ProtoValue[] } };

/**
 * A typed value as the wire carries it. Typing left only FLOAT64 / FLOAT32 as numbers (INT64 and the rest are
 * strings, non-finite floats the strings Spanner reads), so the mapping needs no column type, and nothing
 * passes through the client's value codec, which would first have to be told a number is a float.
 */
function protoValue(value: WireValue): ProtoValue {
  if (value === null) return { nullValue: 'NULL_VALUE' };
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'number') return { numberValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  return { listValue: { values: value.map(protoValue) } };
}

/**
 * `google.spanner.v1.BatchWriteRequest.MutationGroup` of one mutation. An instance of a class, not a plain
 * object: the client deep-copies a request's plain objects before sending it (`extend(true, …)` in
 * `Spanner#prepareGapicRequest_`), which would copy every value again, and passes other objects, like its own
 * protobuf groups, as they are.
 */
class GroupProto {
  constructor(readonly mutations: Array<Record<string, unknown>>) {}
}

/** The group of one mutation, built from its wire values. */
function wireGroup(m: TypedMutation): GroupProto {
  const values = { values: m.values.map(protoValue) };
  if (m.op === 'delete') return new GroupProto([{ delete: { table: m.table, keySet: { keys: [values] } } }]);
  // The ops are the request's own field names: insert, update, insertOrUpdate, replace.
  return new GroupProto([{ [m.op]: { table: m.table, columns: m.columns, values: [values] } }]);
}

/**
 * A mutation group the client sends as built here: the client takes each group's `proto()` for the request
 * (`Database#batchWriteAtLeastOnce`), so its session handling, retry on a lost session, headers and tracing stay
 * the client's own.
 */
class WireMutationGroup extends MutationGroup {
  constructor(private readonly wire: GroupProto) {
    super();
  }
  override proto(): ReturnType<MutationGroup['proto']> {
    return this.wire as ReturnType<MutationGroup['proto']>;
  }
}

function statusOf(err: unknown): GroupStatus {
  const e = err as { code?: unknown; details?: unknown; message?: unknown };
  const code = typeof e?.code === 'number' && e.code >= 0 && e.code <= 16 ? e.code : GrpcCode.UNKNOWN;
  const message = typeof e?.details === 'string' && e.details ? e.details : String(e?.message ?? err);
  return { code, message };
}

/** Seconds of a protobuf Timestamp: a number, a decimal string, or a `Long` (read from its halves, not its text). */
function secondsOf(v: unknown): bigint {
  if (typeof v === 'number' || typeof v === 'string') return BigInt(v);
  const long = v as { low?: unknown; high?: unknown } | null | undefined;
  if (typeof long?.low === 'number' && typeof long.high === 'number')
    return (BigInt(long.high) << 32n) + BigInt(long.low >>> 0);
  return BigInt(String(v ?? 0));
}

function reportsOf(r: BatchWriteResponse): GroupReport[] {
  const status = { code: r.status?.code ?? GrpcCode.OK, message: r.status?.message ?? '' };
  const ts = r.commitTimestamp;
  const commitTimestamp =
    status.code === GrpcCode.OK && ts ? fromSecondsAndNanos(secondsOf(ts.seconds), ts.nanos ?? 0) : undefined;
  return (r.indexes ?? []).map((position) => ({
    position,
    status,
    ...(commitTimestamp !== undefined ? { commitTimestamp } : {}),
  }));
}

/** Writes mutation groups with `batchWriteAtLeastOnce`. */
export class SpannerMutationSink implements MutationSink {
  constructor(private readonly database: Database) {}

  batchWrite(mutations: TypedMutation[], options: BatchWriteOptions): Promise<BatchWriteResult> {
    const groups = mutations.map((m) => new WireMutationGroup(wireGroup(m)));
    const reports: GroupReport[] = [];
    return new Promise((resolve) => {
      let settled = false;
      const stream = this.database.batchWriteAtLeastOnce(groups, {
        ...(options.tag ? { requestOptions: { transactionTag: options.tag } } : {}),
        gaxOptions: { timeout: options.timeoutMs },
      }) as unknown as NodeJS.ReadableStream & { destroy(): void };
      const finish = (callError?: GroupStatus) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(callError ? { reports, callError } : { reports });
      };
      const timer = setTimeout(() => {
        finish({
          code: GrpcCode.DEADLINE_EXCEEDED,
          message: `BatchWrite took longer than ${options.timeoutMs} ms`,
        });
        stream.destroy();
      }, options.timeoutMs);
      stream
        .on('data', (r: BatchWriteResponse) => reports.push(...reportsOf(r)))
        .on('error', (err: unknown) => finish(statusOf(err)))
        .on('end', () => finish());
    });
  }
}
