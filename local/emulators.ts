/**
 * The emulators of the local stack, started in-process on loopback: Spanner (with the change-stream
 * engine and partition churn), Cloud Storage, Cloud Tasks, BigQuery and the Data Lineage API. Their admin
 * handles are returned as they are, so tests and benchmarks can inject faults through them; each also serves
 * its admin HTTP endpoint (faults, churn), so a script outside this process can do the same against a running
 * stack.
 */

import { join } from 'node:path';
import { type BigQueryEmulator, startBigQueryEmulator } from './emulators/bigquery/emulator';
import { type GcsEmulator, startGcsEmulator } from './emulators/gcs/emulator';
import { type LineageEmulator, startLineageEmulator } from './emulators/lineage/emulator';
import type { ChangeStreamAdmin } from './emulators/spanner/change-streams/engine';
import { type RunningSpannerEmulator, startSpannerEmulator } from './emulators/spanner/server';
import { startTasksEmulator, type TasksEmulator } from './emulators/tasks/emulator';
import type { QueueInput } from './emulators/tasks/queue';

/** Ports of the emulators (0 or absent: a free one). */
export interface EmulatorPorts {
  spanner?: number;
  gcs?: number;
  tasks?: number;
  bigqueryRest?: number;
  bigqueryWrite?: number;
  lineage?: number;
  /** The admin endpoints (faults, churn): kept with the others across a `--data-dir` restart. */
  spannerAdmin?: number;
  gcsAdmin?: number;
  tasksAdmin?: number;
  bigqueryAdmin?: number;
  lineageAdmin?: number;
}

/** What the emulators are started with. */
export interface EmulatorSetup {
  projectId: string;
  ports: EmulatorPorts;
  bucket: string;
  /** Queue names, or `Queue` messages (e.g. with `rateLimits.maxConcurrentDispatches`). */
  queues: Array<string | QueueInput>;
  /** Change-stream partitions of a new stream. */
  initialPartitions: number;
  /** Split / move / merge partitions on this interval (0: only on demand). */
  churnMs: number;
  /** Data per PartitionQuery partition (the Spanner emulator's `partitionBytes`; default 4 MiB). */
  partitionBytes?: number;
  /** Keep each emulator's state in `<dataDir>/<emulator>` across runs (absent: in memory). */
  dataDir?: string;
}

/** The running emulators and their admin handles. */
export interface LocalEmulators {
  spanner: RunningSpannerEmulator;
  gcs: GcsEmulator;
  tasks: TasksEmulator;
  bigquery: BigQueryEmulator;
  lineage: LineageEmulator;
  /** The change-stream engine's admin handle of a database (by full name). */
  changeStreams(database: string): ChangeStreamAdmin;
  stop(): Promise<void>;
}

/** Resolves every start, or stops the ones that did start and rejects with the first failure. */
async function allOrNothing<T extends ReadonlyArray<Promise<{ stop(): Promise<void> }>>>(
  starts: T,
): Promise<{ [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(starts);
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (!failure) return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as never;
  await Promise.all(settled.map((s) => (s.status === 'fulfilled' ? s.value.stop() : undefined)));
  throw failure.reason;
}

/** Starts every emulator concurrently (if one cannot start, the others are stopped again). */
export async function startEmulators(setup: EmulatorSetup): Promise<LocalEmulators> {
  const dir = (name: string) => (setup.dataDir ? { dataDir: join(setup.dataDir, name) } : {});
  /** The ports (named after the emulator) and the data directory of every emulator but BigQuery's. */
  const own = (name: 'spanner' | 'gcs' | 'tasks' | 'lineage') => ({
    port: setup.ports[name] ?? 0,
    adminPort: setup.ports[`${name}Admin` as const] ?? 0,
    ...dir(name),
  });
  const [spanner, gcs, tasks, bigquery, lineage] = await allOrNothing([
    startSpannerEmulator({
      ...own('spanner'),
      initialPartitions: setup.initialPartitions,
      churnMs: setup.churnMs,
      ...(setup.partitionBytes ? { partitionBytes: setup.partitionBytes } : {}),
    }),
    startGcsEmulator({
      ...own('gcs'),
      buckets: [setup.bucket],
    }),
    startTasksEmulator({
      ...own('tasks'),
      queues: setup.queues,
    }),
    startBigQueryEmulator({
      grpcPort: setup.ports.bigqueryWrite ?? 0,
      restPort: setup.ports.bigqueryRest ?? 0,
      adminPort: setup.ports.bigqueryAdmin ?? 0,
      projectId: setup.projectId,
      ...dir('bigquery'),
    }),
    startLineageEmulator(own('lineage')),
  ] as const);
  return {
    spanner,
    gcs,
    tasks,
    bigquery,
    lineage,
    changeStreams(database) {
      const engine = spanner.admin.changeStreamEngine(database);
      if (!engine) throw new Error(`no change-stream engine for ${database}`);
      return engine.admin;
    },
    async stop() {
      await Promise.all([spanner.stop(), gcs.stop(), tasks.stop(), bigquery.stop(), lineage.stop()]);
    },
  };
}
