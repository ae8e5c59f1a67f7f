/**
 * Queue configuration: parsing the client's `Queue` message (zod at the boundary), applying an update mask,
 * the production defaults, and the `Queue` resource the service answers with.
 */
import { status } from '@grpc/grpc-js';
import { z } from 'zod';
import { DEFAULT_RETRY, type RetryPolicy } from './backoff';
import { fromMs, TasksError, toMs } from './wire';

/** A queue's dispatch limits. */
export interface RateLimits {
  maxDispatchesPerSecond: number;
  /** Token-bucket size. Output-only in the API; derived from the rate unless the creator sets it. */
  maxBurstSize: number;
  maxConcurrentDispatches: number;
}

/** A queue as the emulator keeps it (dispatch state lives in the dispatcher). */
export interface QueueConfig {
  name: string;
  rateLimits: RateLimits;
  retry: RetryPolicy;
  paused: boolean;
  purgeTimeMs?: number;
  samplingRatio?: number;
  /** `app_engine_routing_override`, kept and returned. */
  appEngineRouting?: Record<string, string>;
}

const duration = z
  .object({ seconds: z.union([z.string(), z.number()]).nullish(), nanos: z.number().nullish() })
  .nullish();
const count = z.number().nullish();

const queueSchema = z
  .object({
    name: z.string().nullish(),
    rateLimits: z
      .object({ maxDispatchesPerSecond: count, maxBurstSize: count, maxConcurrentDispatches: count })
      .nullish(),
    retryConfig: z
      .object({
        maxAttempts: count,
        maxRetryDuration: duration,
        minBackoff: duration,
        maxBackoff: duration,
        maxDoublings: count,
      })
      .nullish(),
    stackdriverLoggingConfig: z.object({ samplingRatio: count }).nullish(),
    appEngineRoutingOverride: z.record(z.string(), z.string().nullish()).nullish(),
  })
  .loose();

/** The client's `Queue` message, parsed. */
export type QueueInput = z.infer<typeof queueSchema>;

/** Parses a `Queue` message from a request. */
export function parseQueue(value: unknown): QueueInput {
  const parsed = queueSchema.safeParse(value ?? {});
  if (!parsed.success)
    throw new TasksError(status.INVALID_ARGUMENT, `Invalid queue: ${parsed.error.message}`);
  return parsed.data;
}

/** The burst the service would pick for a rate (it is output-only there). */
function burstFor(rate: number): number {
  return Math.max(1, Math.min(100, Math.ceil(rate)));
}

/** A fresh queue with production defaults. */
export function defaultQueue(name: string): QueueConfig {
  return {
    name,
    rateLimits: { maxDispatchesPerSecond: 500, maxBurstSize: 100, maxConcurrentDispatches: 1000 },
    retry: { ...DEFAULT_RETRY },
    paused: false,
  };
}

/** Field paths of an update mask, snake_case or camelCase, normalised to camelCase. */
function maskPaths(mask: unknown): string[] | undefined {
  const paths = typeof mask === 'object' && mask !== null && 'paths' in mask ? mask.paths : undefined;
  if (!Array.isArray(paths) || paths.length === 0) return undefined;
  return paths.map((p) => String(p).replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()));
}

/** Applies `input` to `queue`; with a mask, only the masked fields (and their sub-fields) change. */
export function applyQueue(queue: QueueConfig, input: QueueInput, mask?: unknown): QueueConfig {
  const paths = maskPaths(mask);
  const want = (path: string) => !paths || paths.some((p) => p === path || path.startsWith(`${p}.`));
  const r = input.rateLimits ?? {};
  const c = input.retryConfig ?? {};
  const next: QueueConfig = { ...queue, rateLimits: { ...queue.rateLimits }, retry: { ...queue.retry } };
  const set = <T>(path: string, value: T | null | undefined, apply: (v: T) => void) => {
    if (want(path) && value !== undefined && value !== null && (value !== 0 || paths)) apply(value);
  };
  set('rateLimits.maxDispatchesPerSecond', r.maxDispatchesPerSecond, (v) => {
    next.rateLimits.maxDispatchesPerSecond = v;
    next.rateLimits.maxBurstSize = burstFor(v);
  });
  set('rateLimits.maxBurstSize', r.maxBurstSize, (v) => (next.rateLimits.maxBurstSize = v));
  set(
    'rateLimits.maxConcurrentDispatches',
    r.maxConcurrentDispatches,
    (v) => (next.rateLimits.maxConcurrentDispatches = v),
  );
  set('retryConfig.maxAttempts', c.maxAttempts, (v) => (next.retry.maxAttempts = v));
  set('retryConfig.maxRetryDuration', toMs(c.maxRetryDuration), (v) => (next.retry.maxRetryDurationMs = v));
  set('retryConfig.minBackoff', toMs(c.minBackoff), (v) => (next.retry.minBackoffMs = v));
  set('retryConfig.maxBackoff', toMs(c.maxBackoff), (v) => (next.retry.maxBackoffMs = v));
  set('retryConfig.maxDoublings', c.maxDoublings, (v) => (next.retry.maxDoublings = v));
  set(
    'stackdriverLoggingConfig.samplingRatio',
    input.stackdriverLoggingConfig?.samplingRatio,
    (v) => (next.samplingRatio = v),
  );
  set('appEngineRoutingOverride', input.appEngineRoutingOverride, (v) => {
    next.appEngineRouting = Object.fromEntries(Object.entries(v).filter(([, x]) => x)) as Record<
      string,
      string
    >;
  });
  checkLimits(next);
  return next;
}

function checkLimits(q: QueueConfig): void {
  const bad = (msg: string) => new TasksError(status.INVALID_ARGUMENT, msg);
  const {
    maxDispatchesPerSecond: rate,
    maxConcurrentDispatches: concurrent,
    maxBurstSize: burst,
  } = q.rateLimits;
  if (!(rate > 0 && rate <= 500)) throw bad('max_dispatches_per_second must be in (0, 500]');
  if (!(concurrent >= 1 && concurrent <= 5000)) throw bad('max_concurrent_dispatches must be in [1, 5000]');
  if (!(burst >= 1 && burst <= 500)) throw bad('max_burst_size must be in [1, 500]');
  if (q.retry.maxAttempts < -1) throw bad('max_attempts must be -1 (unlimited) or positive');
  if (q.retry.minBackoffMs > q.retry.maxBackoffMs) throw bad('min_backoff must not exceed max_backoff');
}

/** The `Queue` resource. */
export function queueResource(q: QueueConfig): Record<string, unknown> {
  return {
    name: q.name,
    rateLimits: { ...q.rateLimits },
    retryConfig: {
      maxAttempts: q.retry.maxAttempts,
      maxRetryDuration: fromMs(q.retry.maxRetryDurationMs),
      minBackoff: fromMs(q.retry.minBackoffMs),
      maxBackoff: fromMs(q.retry.maxBackoffMs),
      maxDoublings: q.retry.maxDoublings,
    },
    state: q.paused ? 'PAUSED' : 'RUNNING',
    purgeTime: q.purgeTimeMs !== undefined ? fromMs(q.purgeTimeMs) : undefined,
    stackdriverLoggingConfig: q.samplingRatio !== undefined ? { samplingRatio: q.samplingRatio } : undefined,
    appEngineRoutingOverride: q.appEngineRouting,
  };
}
