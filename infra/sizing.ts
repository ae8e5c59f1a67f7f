/**
 * Function sizing and queue settings derived from the pipeline settings. Every number here has a reason,
 * written next to it; `docs/deploy.md` repeats them for operators.
 */
import type {
  DeploymentConfig,
  FunctionName,
  FunctionSizingInput,
  QueueOverrides,
} from './deployment-schema';

/** Cloud Tasks gives an HTTP task at most 30 minutes; a window must finish well inside it. */
export const TASK_DEADLINE_SECONDS = 1800;
/** Time a reader needs beyond the window itself: the last flush to BigQuery and the ledger write. */
export const WINDOW_MARGIN_SECONDS = 60;

/**
 * The writer answers within its request deadline (400 s by default, room for the worst-case retry of one
 * group, 355.5 s: docs/writer.md); the function may run a little longer to write dead letters and answer.
 */
export const WRITER_DEADLINE_SECONDS = 400;
export const WRITER_TIMEOUT_SECONDS = WRITER_DEADLINE_SECONDS + 30;

/** Ingress settings accepted by Cloud Run functions. */
export type Ingress = 'ALLOW_INTERNAL_ONLY' | 'ALLOW_ALL' | 'ALLOW_INTERNAL_AND_GCLB';

/** How one function runs. */
export interface FunctionSizing {
  memory: string;
  cpu: number;
  minInstances: number;
  maxInstances: number;
  concurrency: number;
  timeoutSeconds: number;
  ingress: Ingress;
}

/** Rate limits and retries of one Cloud Tasks queue. */
export interface QueueSettings {
  maxDispatchesPerSecond: number;
  maxConcurrentDispatches: number;
  maxAttempts: number;
  minBackoffSeconds: number;
  maxBackoffSeconds: number;
  maxDoublings: number;
  /** Queues of this kind, each with these settings; tasks are spread over them by partition. */
  shards: number;
}

/** Cloud Tasks' ceiling on a queue's concurrent dispatches (RateLimits.max_concurrent_dispatches). */
export const MAX_CONCURRENT_DISPATCHES = 5_000;

/** The part of the pipeline settings that decides sizes. */
export interface PipelineShape {
  mode: 'scheduled' | 'continuous';
  /** Longest window one reader invocation may run, in seconds. */
  maxWindowSeconds: number;
}

/**
 * Defaults per function. The reader and backfill run many requests per instance (partitions share an
 * instance), which Cloud Run allows only with at least one vCPU. The scheduler runs one tick at a time
 * (Cloud Scheduler never overlaps executions), so one instance of concurrency 1 is enough.
 */
function defaultSizing(name: FunctionName, pipeline: PipelineShape): FunctionSizing {
  const readerTimeout = Math.min(TASK_DEADLINE_SECONDS, pipeline.maxWindowSeconds + WINDOW_MARGIN_SECONDS);
  switch (name) {
    case 'scheduler':
      return base('512Mi', 1, 1, 1, 300, 'ALLOW_INTERNAL_ONLY');
    case 'reader':
      // Continuous windows hold a request open for minutes while mostly waiting on the stream: allow more
      // of them per instance than short scheduled windows.
      return base(
        '1Gi',
        1,
        10,
        pipeline.mode === 'continuous' ? 32 : 16,
        readerTimeout,
        'ALLOW_INTERNAL_ONLY',
      );
    case 'backfill':
      // Operators call the backfill API from outside the project: network-open, IAM-only.
      return base('1Gi', 1, 10, 4, TASK_DEADLINE_SECONDS, 'ALLOW_ALL');
    case 'writer':
      // Producers may call from anywhere (IAM-only); a request mostly waits on Spanner, so many share
      // an instance.
      return base('512Mi', 1, 20, 16, WRITER_TIMEOUT_SECONDS, 'ALLOW_ALL');
  }
}

function base(
  memory: string,
  cpu: number,
  maxInstances: number,
  concurrency: number,
  timeoutSeconds: number,
  ingress: Ingress,
): FunctionSizing {
  // minInstances 0: scale to zero is what keeps the idle cost near nothing.
  return { memory, cpu, minInstances: 0, maxInstances, concurrency, timeoutSeconds, ingress };
}

/** Sizing of one function: defaults, then the stack's overrides. */
export function functionSizing(
  name: FunctionName,
  pipeline: PipelineShape,
  overrides: FunctionSizingInput | undefined,
): FunctionSizing {
  const merged = { ...defaultSizing(name, pipeline) };
  for (const [k, v] of Object.entries(overrides ?? {})) {
    if (v !== undefined) Object.assign(merged, { [k]: v });
  }
  return merged;
}

/**
 * Reader queue: at most as many concurrent dispatches as the reader instances accept (so the queue never
 * provokes 429s from Cloud Run), a rate that lets a one-minute tick dispatch thousands of partitions, and
 * quick bounded retries: a retry later than the next tick is pointless, because the scheduler re-drives a
 * partition whose lease expired.
 */
export function readerQueue(
  reader: FunctionSizing,
  overrides: (QueueOverrides & { shards?: number | undefined }) | undefined,
): QueueSettings {
  const shards = overrides?.shards ?? 1;
  return withOverrides(
    {
      shards,
      maxDispatchesPerSecond: 100,
      // Shared out over the shards, and never past what one queue allows.
      maxConcurrentDispatches: Math.min(
        MAX_CONCURRENT_DISPATCHES,
        Math.ceil((reader.maxInstances * reader.concurrency) / shards),
      ),
      maxAttempts: 20,
      minBackoffSeconds: 1,
      maxBackoffSeconds: 60,
      maxDoublings: 4,
    },
    overrides,
  );
}

/**
 * Backfill queue: each task runs one partition of a snapshot query. Without Data Boost it spends the
 * instance's own compute, so it is throttled hard; with Data Boost the work runs on separate compute and
 * may go as wide as the backfill instances accept. Retries are patient: a partition is idempotent (UPSERTs
 * at sequence (T, 0, 0)) and losing one means an incomplete backfill.
 */
export function backfillQueue(
  backfill: FunctionSizing,
  dataBoost: boolean,
  overrides: QueueOverrides | undefined,
): QueueSettings {
  const capacity = backfill.maxInstances * backfill.concurrency;
  return withOverrides(
    {
      shards: 1,
      maxDispatchesPerSecond: 5,
      maxConcurrentDispatches: dataBoost ? capacity : Math.min(4, capacity),
      maxAttempts: 10,
      minBackoffSeconds: 10,
      maxBackoffSeconds: 300,
      maxDoublings: 4,
    },
    overrides,
  );
}

function withOverrides(defaults: QueueSettings, overrides: QueueOverrides | undefined): QueueSettings {
  const merged = { ...defaults };
  for (const [k, v] of Object.entries(overrides ?? {})) {
    if (v !== undefined) Object.assign(merged, { [k]: v });
  }
  return merged;
}

/** All four sizings from the deployment keys. */
export function allSizings(
  pipeline: PipelineShape,
  deployment: DeploymentConfig,
): Record<FunctionName, FunctionSizing> {
  return {
    scheduler: functionSizing('scheduler', pipeline, deployment.functions.scheduler),
    reader: functionSizing('reader', pipeline, deployment.functions.reader),
    backfill: functionSizing('backfill', pipeline, deployment.functions.backfill),
    writer: functionSizing('writer', pipeline, deployment.functions.writer),
  };
}
