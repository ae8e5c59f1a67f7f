/**
 * The status object the scheduler writes each tick and `GET /status` returns: pipeline state, watermark, lag,
 * partitions by state, and the last errors — what an operator looks at first.
 */
import type { LastError, Manifest, PartitionState, PartitionView, TickPlan } from '../../domain/ledger';
import { diffMillis, formatTimestamp, type Timestamp } from '../../domain/timestamp';
import type { EnrichmentTotals } from '../enrichment';
import type { LineageStats } from '../lineage';
import type { TableStatus } from '../tables';
import type { DeadLetterCounts } from './dead-letters';

/** One recorded failure, for the status page. */
export interface StatusError {
  partition?: string;
  kind: string;
  message: string;
  at: string;
  /** The partition's state when the error is a partition's: `failed`, or `ready` while it is being retried. */
  state?: PartitionState;
  /** Failed attempts since the partition last moved (a partition's error only). */
  failures?: number;
  /** The record the failure was met on: table, column, key (JSON) and commit timestamp. */
  record?: { table: string; column?: string; key: string; commitTimestamp: string };
}

/** The status document (JSON). */
export interface PipelineStatus {
  pipeline: string;
  state: Manifest['state'] | 'uninitialised';
  reason: string | null;
  epoch: number | null;
  stream: string;
  updatedAt: string;
  /** Every change committed at or before this instant is in the sinks (null: nothing unfinished). */
  watermark: string | null;
  lagSeconds: number | null;
  partitions: Record<PartitionState, number> & { total: number };
  /** The partitions furthest behind (id → lag in seconds), at most ten. */
  slowest: Array<{ partition: string; lagSeconds: number }>;
  retention: { seconds: number; marginSeconds: number; danger: boolean } | null;
  lastErrors: StatusError[];
  /**
   * Dead letters neither replayed nor discarded, the writer's included, by table and reason (ADR-1503,
   * ADR-2202, ADR-2203); absent when not counted.
   */
  deadLetters?: DeadLetterCounts;
  listCalls: number;
  /** Every source table the stream watches (and any dropped one): where it goes, its columns, its state. */
  tables: TableStatus[];
  /**
   * Leases found past their expiry at this tick (ADR-1511): the holder died or stalled, and the tick enqueued
   * a takeover. Empty in a healthy pipeline; an entry stays until another reader takes the partition over.
   */
  stalled?: StalledLease[];
  /**
   * Per lookup (`<table>.lookups[<i>]`), summed over the reader instances: rows enriched, point reads,
   * retries, rows whose dimension row was missing or whose key was unresolved (their columns NULL), cache
   * hits and misses (docs/enrichment.md); absent when no table has lookups.
   */
  enrichment?: EnrichmentTotals;
  /** The scheduler's lineage reporter: events sent, pending in its outbox, failed sends, dropped events. */
  lineage?: LineageStats;
  /** Watermark lag at each of the last ticks, oldest first: at most {@link LAG_HISTORY} (the console's chart). */
  lagHistory?: LagSample[];
}

/** A lease past its expiry: which partition, which reader held it, since when it may be taken over. */
export interface StalledLease {
  partition: string;
  holder: string;
  leaseExpiredAt: string;
  secondsPastLease: number;
}

/** One tick's watermark lag. */
export interface LagSample {
  at: string;
  lagSeconds: number;
}

/** Bounds of the lag series: six hours of one-minute ticks, and never more samples than that. */
export const LAG_HISTORY = { samples: 360, hours: 6 } as const;

/**
 * The status to write: `status` with the lag series of the `previous` status object (as read back, so
 * untrusted) carried forward and this tick's sample appended, trimmed to {@link LAG_HISTORY}.
 */
export function withLagSample(previous: unknown, status: PipelineStatus): PipelineStatus {
  const old = (previous as { lagHistory?: unknown } | undefined)?.lagHistory;
  const samples: LagSample[] = Array.isArray(old)
    ? old.filter(
        (s): s is LagSample =>
          typeof s === 'object' && s !== null && typeof s.at === 'string' && typeof s.lagSeconds === 'number',
      )
    : [];
  if (status.lagSeconds !== null) samples.push({ at: status.updatedAt, lagSeconds: status.lagSeconds });
  // RFC 3339 strings with nine fractional digits in UTC compare in time order.
  const from = new Date(Date.parse(status.updatedAt) - LAG_HISTORY.hours * 3_600_000).toISOString();
  const kept = samples.filter((s) => s.at.slice(0, 23) >= from.slice(0, 23)).slice(-LAG_HISTORY.samples);
  return { ...status, lagHistory: kept };
}

/** Counts partitions by state. */
export function countByState(views: readonly PartitionView[]): PipelineStatus['partitions'] {
  const counts = { waiting: 0, ready: 0, leased: 0, finished: 0, failed: 0, total: views.length };
  for (const v of views) counts[v.state]++;
  return counts;
}

/** Lag of the watermark behind `now`, in seconds (one decimal). */
export function lagSeconds(watermark: Timestamp | null, now: Timestamp): number | null {
  return watermark === null ? null : Math.max(0, Math.round(diffMillis(now, watermark) / 100) / 10);
}

/** Builds the status document of a tick. */
export function buildStatus(args: {
  manifest: Manifest;
  views: readonly PartitionView[];
  plan: TickPlan;
  now: Timestamp;
  retention: PipelineStatus['retention'];
  errors: StatusError[];
  listCalls: number;
  tables?: TableStatus[];
  deadLetters?: DeadLetterCounts | undefined;
  enrichment?: EnrichmentTotals | undefined;
  lineage?: LineageStats | undefined;
}): PipelineStatus {
  const { manifest, plan, now } = args;
  const slowest = Object.entries(plan.lagMillis)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 10)
    .map(([partition, ms]) => ({ partition, lagSeconds: Math.round(ms / 100) / 10 }));
  return {
    pipeline: manifest.pipeline,
    state: manifest.state,
    reason: manifest.reason,
    epoch: manifest.epoch,
    stream: manifest.stream,
    updatedAt: formatTimestamp(now),
    watermark: plan.watermark === null ? null : formatTimestamp(plan.watermark),
    lagSeconds: lagSeconds(plan.watermark, now),
    partitions: countByState(args.views),
    slowest,
    retention: args.retention,
    lastErrors: args.errors.slice(0, 20),
    ...(args.deadLetters ? { deadLetters: args.deadLetters } : {}),
    ...(args.enrichment ? { enrichment: args.enrichment } : {}),
    ...(args.lineage ? { lineage: args.lineage } : {}),
    listCalls: args.listCalls,
    tables: args.tables ?? [],
    stalled: stalledLeases(args.views, plan, now),
  };
}

/** The leases the tick plan found expired, oldest expiry first. */
function stalledLeases(views: readonly PartitionView[], plan: TickPlan, now: Timestamp): StalledLease[] {
  const expired = new Set(plan.expired);
  return views
    .filter((v) => expired.has(v.id) && v.lease !== null)
    .map((v) => ({ id: v.id, lease: v.lease! }))
    .sort((a, b) => (a.lease.expiresAt < b.lease.expiresAt ? -1 : 1))
    .map(({ id, lease }) => ({
      partition: id,
      holder: lease.holder,
      leaseExpiredAt: formatTimestamp(lease.expiresAt),
      secondsPastLease: Math.round(diffMillis(now, lease.expiresAt) / 100) / 10,
    }));
}

/** A partition's recorded error as the status shows it. */
export function partitionError(view: PartitionView, last: LastError): StatusError {
  const { record } = last;
  return {
    partition: view.id,
    kind: last.kind,
    message: last.message,
    at: formatTimestamp(last.at),
    state: view.state,
    failures: view.failures,
    ...(record
      ? {
          record: {
            table: record.table,
            ...(record.column ? { column: record.column } : {}),
            key: record.key,
            commitTimestamp: formatTimestamp(record.commitTimestamp),
          },
        }
      : {}),
  };
}

/**
 * The status while the configuration cannot work against the database (a table missing, not watched, …):
 * `stopped` with the reason and its fix, partitions as the manifest left them unknown (ADR-1507).
 */
export function stoppedStatus(args: {
  pipeline: string;
  stream: string;
  reason: string;
  now: Timestamp;
  epoch: number | null;
}): PipelineStatus {
  const none = countByState([]);
  return {
    pipeline: args.pipeline,
    state: 'stopped',
    reason: args.reason,
    epoch: args.epoch,
    stream: args.stream,
    updatedAt: formatTimestamp(args.now),
    watermark: null,
    lagSeconds: null,
    partitions: none,
    slowest: [],
    retention: null,
    lastErrors: [],
    listCalls: 0,
    tables: [],
  };
}
