/**
 * The capacity model of one pipeline in continuous mode: for a workload (partitions, mods per second) and the
 * deployment's settings, what each resource must carry against its limit, which limit comes first, the
 * settings that pass the limits a setting can pass (queue shards among them), how many projects the rest need, the lag
 * and the cost. Pure arithmetic over measured costs (`MEASURED`, from the benchmarks) and the counts of one
 * window (`WINDOW_OPS`, from the real reader on the in-memory ports: `npm run capacity` measures them again
 * and prints both); docs/performance.md explains each line.
 *
 * Continuous mode holds one window open per partition (a long poll of `longPollSeconds`), chains the next at
 * once, flushes to BigQuery every second and checkpoints the ledger every `checkpointSeconds`.
 */

import { LIMITS, type Limit } from './limits';

export interface Workload {
  partitions: number;
  modsPerSecond: number;
  /** Size of a mod as the change stream returns it (keys, new and old values). */
  bytesPerMod: number;
  /** Tables one partition writes during a window (each has a replica and a history destination). */
  tablesPerPartition: number;
  /** Partitions that start each hour (splits and merges); each opens its own history streams. */
  newPartitionsPerHour: number;
  /** Whether the dataset is in the US or EU multi-region (more connections and throughput). */
  multiRegion: boolean;
}

export interface Deployment {
  longPollSeconds: number;
  checkpointSeconds: number;
  tickSeconds: number;
  streamMaxAgeHours: number;
  reader: { cpu: number; concurrency: number; maxInstances: number; memoryGiB: number };
  /** Per reader queue; `shards` queues share the partitions (`sluice:queues.reader.shards`). */
  queue: { maxDispatchesPerSecond: number; maxConcurrentDispatches: number; shards: number };
}

/** CPU costs measured on the benchmark machine (docs/performance.md). */
export interface Costs {
  /** Reader, full path (change stream → map → Storage Write), one core. */
  modsPerCpuSecond: number;
  /** Reader CPU of one window beyond its mods: task, ledger reads and writes, query set-up. */
  cpuSecondsPerWindow: number;
  /** Scheduler CPU of one tick per 1,000 partitions. */
  tickCpuSecondsPer1000: number;
  /** End-to-end latency on the idle local stack, continuous mode. */
  idleLatency: { p50: number; p99: number };
}

/** The operations of one window and of one checkpoint, as the reader makes them. */
export interface WindowOps {
  /** Ledger writes of a window that read data (lease, final checkpoint and release). */
  ledgerWritesPerWindow: number;
  ledgerReadsPerWindow: number;
  /** Cloud Tasks operations: the next window's task created and its delivery. */
  taskOpsPerWindow: number;
}

export const MEASURED: Costs = {
  // docs/performance.md, "Cost per GiB of changes": the reader's 12,743 mods per CPU-second on this machine.
  modsPerCpuSecond: 12_743,
  // A window's own requests are a handful of GCS and Tasks calls; the quiet-window cost model bills 0.5 s of
  // wall time for them and their waits; the CPU share is taken as a fifth of it.
  cpuSecondsPerWindow: 0.1,
  // docs/performance.md: a tick over 10,000 partitions took 779 ms (GCS emulator in the same process).
  tickCpuSecondsPer1000: 0.078,
  // docs/performance.md: continuous mode, 0.43 s / 1.02 s.
  idleLatency: { p50: 0.43, p99: 1.02 },
};

/**
 * Measured by `npm run capacity` (the real reader and scheduler on the virtual clock): 2.01 ledger writes and
 * 5.07 reads per window that read data; each window's task is created and delivered once; a tick lists
 * the ledger once per 1,000 partitions plus two fixed listings.
 */
export const WINDOW_OPS: WindowOps = {
  ledgerWritesPerWindow: 2,
  ledgerReadsPerWindow: 5,
  taskOpsPerWindow: 2,
};

/** The deployment's defaults (infra/sizing.ts, shared/domain/config.ts) in continuous mode. */
export const DEFAULT_DEPLOYMENT: Deployment = {
  longPollSeconds: 120,
  checkpointSeconds: 5,
  tickSeconds: 60,
  streamMaxAgeHours: 24,
  reader: { cpu: 1, concurrency: 32, maxInstances: 10, memoryGiB: 1 },
  queue: { maxDispatchesPerSecond: 100, maxConcurrentDispatches: 320, shards: 1 },
};

/** List prices (docs/performance.md, "Cost model"), free tiers left out. */
const PRICE = {
  vcpuSecond: 0.000024,
  gibSecond: 0.0000025,
  taskOp: 0.4e-6,
  classA: 0.005 / 1_000,
  classB: 0.0004 / 1_000,
  writeGiB: 0.025,
};
const MONTH_SECONDS = 2_592_000;
/** BigQuery ingests about 2.5 bytes per byte of change (replica ≈ 1×, history rows with JSON ≈ 1.5×). */
const INGEST_FACTOR = 2.5;
/** Instances are sized to run at this share of their CPU, so bursts do not queue. */
const TARGET_UTILISATION = 0.7;
/** Share of a rate limit the proposed settings may use. */
const HEADROOM = 0.8;

export interface Demand {
  limit: Limit;
  /** What the workload needs of it. */
  needed: number;
  /** The value that applies under the deployment (the setting where it is one, else the limit). */
  allowed: number;
  /** `needed / allowed`: above 1 the pipeline does not keep up there. */
  load: number;
}

export interface Plan {
  workload: Workload;
  demands: Demand[];
  /** The demand with the highest load above 1, if any. */
  firstLimit: Demand | undefined;
  vcpus: number;
  instances: number;
  /** Settings that pass every limit a setting can pass. */
  settings: Deployment;
  /** Pipelines needed for the limits neither a setting nor queue shards pass, and projects for the per-project ones. */
  pipelines: number;
  projects: number;
  lag: { p50: number; p99: number } | 'falls behind';
  costPerMonth: number;
  costPerGiB: number;
}

/** The plan of one workload under one deployment. */
export function plan(w: Workload, d: Deployment = DEFAULT_DEPLOYMENT, costs: Costs = MEASURED): Plan {
  const windowsPerSecond = w.partitions / d.longPollSeconds;
  const vcpus =
    w.modsPerSecond / costs.modsPerCpuSecond +
    windowsPerSecond * costs.cpuSecondsPerWindow +
    (w.partitions / 1_000) * (costs.tickCpuSecondsPer1000 / d.tickSeconds);
  const byCpu = Math.ceil(vcpus / (d.reader.cpu * TARGET_UTILISATION));
  const byRequests = Math.ceil(w.partitions / d.reader.concurrency);
  const instances = Math.max(1, byCpu, byRequests);
  const connections = w.partitions * w.tablesPerPartition * 2;
  const bytesPerSecond = w.modsPerSecond * w.bytesPerMod * INGEST_FACTOR;
  const ledgerWritesPerSecond =
    w.partitions / d.checkpointSeconds + windowsPerSecond * WINDOW_OPS.ledgerWritesPerWindow;
  const streamsPerHour =
    (w.partitions * w.tablesPerPartition) / d.streamMaxAgeHours +
    w.newPartitionsPerHour * w.tablesPerPartition;

  const demand = (limit: Limit, needed: number, allowed = limit.value): Demand => ({
    limit,
    needed,
    allowed,
    load: needed / allowed,
  });
  const setting = (what: string, value: number, source: string): Limit => ({
    what,
    value,
    kind: 'setting',
    source,
    perProject: false,
  });
  const demands: Demand[] = [
    demand(
      setting(
        'reader requests at once (maxInstances × concurrency)',
        d.reader.maxInstances * d.reader.concurrency,
        'infra/sizing.ts',
      ),
      w.partitions,
    ),
    demand(
      setting('reader vCPUs (maxInstances × cpu)', d.reader.maxInstances * d.reader.cpu, 'infra/sizing.ts'),
      vcpus / TARGET_UTILISATION,
    ),
    demand(
      setting(
        'reader queues: concurrent dispatches (per queue × shards)',
        d.queue.maxConcurrentDispatches * d.queue.shards,
        'infra/sizing.ts',
      ),
      w.partitions,
    ),
    demand(
      setting(
        'reader queues: dispatches per second (per queue × shards)',
        d.queue.maxDispatchesPerSecond * d.queue.shards,
        'infra/sizing.ts',
      ),
      windowsPerSecond,
    ),
    demand(LIMITS.concurrentDispatches, w.partitions / d.queue.shards),
    demand(LIMITS.dispatchesPerSecond, windowsPerSecond / d.queue.shards),
    demand(
      LIMITS.objectWritesPerSecond,
      1 / d.checkpointSeconds + WINDOW_OPS.ledgerWritesPerWindow / d.longPollSeconds,
    ),
    demand(LIMITS.bucketWritesPerSecond, ledgerWritesPerSecond),
    demand(w.multiRegion ? LIMITS.connectionsMultiRegion : LIMITS.connectionsRegion, connections),
    demand(LIMITS.createStreamsPerHour, streamsPerHour),
    demand(w.multiRegion ? LIMITS.throughputMultiRegion : LIMITS.throughputRegion, bytesPerSecond),
  ];
  const over = demands.filter((x) => x.load > 1).sort((a, b) => b.load - a.load);

  // What the settings must be: as many instances as the vCPUs need, each taking as many open windows as that
  // leaves (a continuous window mostly waits on the stream), up to Cloud Run's 1,000 a instance; the queue to
  // match, in as many shards as one queue's 5,000 dispatches at once need; and a checkpoint interval that keeps the bucket under its first write rate.
  const concurrency = Math.min(
    LIMITS.requestConcurrency.value,
    Math.max(d.reader.concurrency, Math.ceil(w.partitions / Math.max(1, byCpu))),
  );
  const settingsInstances = Math.max(byCpu, Math.ceil(w.partitions / concurrency), 1);
  const checkpointSeconds = Math.max(
    d.checkpointSeconds,
    Math.ceil(
      w.partitions /
        (HEADROOM * LIMITS.bucketWritesPerSecond.value - windowsPerSecond * WINDOW_OPS.ledgerWritesPerWindow),
    ),
  );
  const shards = Math.max(
    d.queue.shards,
    Math.ceil(w.partitions / LIMITS.concurrentDispatches.value),
    Math.ceil(windowsPerSecond / (HEADROOM * LIMITS.dispatchesPerSecond.value)),
  );
  const settings: Deployment = {
    ...d,
    checkpointSeconds:
      Number.isFinite(checkpointSeconds) && checkpointSeconds > 0 ? checkpointSeconds : d.checkpointSeconds,
    reader: { ...d.reader, concurrency, maxInstances: Math.max(d.reader.maxInstances, settingsInstances) },
    queue: {
      maxDispatchesPerSecond: Math.min(
        LIMITS.dispatchesPerSecond.value,
        Math.max(d.queue.maxDispatchesPerSecond, Math.ceil((windowsPerSecond * 2) / shards)),
      ),
      maxConcurrentDispatches: Math.min(
        LIMITS.concurrentDispatches.value,
        Math.ceil(Math.max(settingsInstances * concurrency, w.partitions) / shards),
      ),
      shards,
    },
  };

  const hard = demands.filter((x) => x.limit.kind === 'hard');
  // A per-queue limit is passed by shards; what else a setting cannot pass needs more pipelines.
  const pipelines = Math.max(
    1,
    ...hard
      .filter(
        (x) =>
          !x.limit.perProject &&
          x.limit !== LIMITS.concurrentDispatches &&
          x.limit !== LIMITS.dispatchesPerSecond,
      )
      .map((x) => Math.ceil(x.load)),
  );
  const projects = Math.max(1, ...hard.filter((x) => x.limit.perProject).map((x) => Math.ceil(x.load)));

  // Lag: the idle figure while there is room; scaled by 1 / (1 − utilisation) as a queue of the readers' CPU;
  // no steady state once the CPU or the window slots are short.
  const slotsShort =
    w.partitions > d.reader.maxInstances * d.reader.concurrency ||
    w.partitions > d.queue.maxConcurrentDispatches * d.queue.shards ||
    w.partitions > LIMITS.concurrentDispatches.value * d.queue.shards;
  const utilisation = vcpus / (d.reader.maxInstances * d.reader.cpu);
  const lag =
    slotsShort || utilisation >= 1
      ? ('falls behind' as const)
      : { p50: costs.idleLatency.p50 / (1 - utilisation), p99: costs.idleLatency.p99 / (1 - utilisation) };

  // Cost: continuous mode keeps the instances busy all month (requests are always open).
  const gibPerMonth = (w.modsPerSecond * w.bytesPerMod * MONTH_SECONDS) / 2 ** 30;
  const costPerMonth =
    instances * MONTH_SECONDS * (d.reader.cpu * PRICE.vcpuSecond + d.reader.memoryGiB * PRICE.gibSecond) +
    windowsPerSecond *
      MONTH_SECONDS *
      (WINDOW_OPS.taskOpsPerWindow * PRICE.taskOp + WINDOW_OPS.ledgerReadsPerWindow * PRICE.classB) +
    ledgerWritesPerSecond * MONTH_SECONDS * PRICE.classA +
    gibPerMonth * INGEST_FACTOR * PRICE.writeGiB;
  return {
    workload: w,
    demands,
    firstLimit: over[0],
    vcpus,
    instances,
    settings,
    pipelines,
    projects,
    lag,
    costPerMonth,
    costPerGiB: gibPerMonth > 0 ? costPerMonth / gibPerMonth : Number.POSITIVE_INFINITY,
  };
}
