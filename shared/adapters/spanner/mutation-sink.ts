/**
 * `MutationSink` on Cloud Spanner: one `batchWriteAtLeastOnce` call, one mutation per mutation group, so the
 * service reports a status per mutation. The client does not retry this RPC (nor should it: the writer
 * decides which groups to re-send), so a failed call is returned, not thrown, with the reports that came
 * before it. Each call is bounded by its own timer as well as the gRPC deadline, so a stalled stream ends.
 */
import { type Database, MutationGroup, Spanner } from '@google-cloud/spanner';
import type { SpannerType } from '../../domain/change-record';
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

/**
 * A typed value as the client must be given it to send exactly that value: floats wrapped (the client would
 * turn an integral number into an INT64-style string), everything else already in its wire form.
 */
function clientValue(value: WireValue, type: SpannerType): unknown {
  if (value === null) return null;
  if (type.code === 'ARRAY' && Array.isArray(value)) {
    const element = type.arrayElementType as SpannerType;
    return value.map((v) => clientValue(v, element));
  }
  if (typeof value === 'number')
    return type.code === 'FLOAT32' ? Spanner.float32(value) : Spanner.float(value);
  return value;
}

function groupOf(m: TypedMutation): MutationGroup {
  const g = new MutationGroup();
  const values = m.values.map((v, i) => clientValue(v, m.types[i] as SpannerType));
  if (m.op === 'delete') {
    g.deleteRows(m.table, [values] as never);
    return g;
  }
  const row: Record<string, unknown> = {};
  m.columns.forEach((c, i) => {
    row[c] = values[i];
  });
  if (m.op === 'insert') g.insert(m.table, row);
  else if (m.op === 'update') g.update(m.table, row);
  else if (m.op === 'replace') g.replace(m.table, row);
  else g.upsert(m.table, row);
  return g;
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
    const groups = mutations.map(groupOf);
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
