/**
 * The four emulators of the local stack, started in-process on loopback: Spanner (with the change-stream
 * engine and partition churn), Cloud Storage, Cloud Tasks and BigQuery. Their admin handles are returned
 * as they are, so tests and benchmarks can inject faults through them.
 */
import { type BigQueryEmulator, startBigQueryEmulator } from './emulators/bigquery/emulator';
import { type GcsEmulator, startGcsEmulator } from './emulators/gcs/emulator';
import { type ChangeStreamAdmin, createChangeStreamEngine } from './emulators/spanner/change-streams/engine';
import { type RunningSpannerEmulator, startSpannerEmulator } from './emulators/spanner/server';
import { startTasksEmulator, type TasksEmulator } from './emulators/tasks/emulator';

/** Ports of the emulators (0 or absent: a free one). */
export interface EmulatorPorts {
  spanner?: number;
  gcs?: number;
  tasks?: number;
  bigqueryRest?: number;
  bigqueryWrite?: number;
}

/** What the emulators are started with. */
export interface EmulatorSetup {
  projectId: string;
  ports: EmulatorPorts;
  bucket: string;
  queues: string[];
  /** Change-stream partitions of a new stream. */
  initialPartitions: number;
  /** Split / move / merge partitions on this interval (0: only on demand). */
  churnMs: number;
}

/** The running emulators and their admin handles. */
export interface LocalEmulators {
  spanner: RunningSpannerEmulator;
  gcs: GcsEmulator;
  tasks: TasksEmulator;
  bigquery: BigQueryEmulator;
  /** The change-stream engine's admin handle of a database (by full name). */
  changeStreams(database: string): ChangeStreamAdmin;
  stop(): Promise<void>;
}

/** Starts all four emulators concurrently. */
export async function startEmulators(setup: EmulatorSetup): Promise<LocalEmulators> {
  const engines = new Map<string, ChangeStreamAdmin>();
  let spannerClock: () => bigint = () => 0n;
  const [spanner, gcs, tasks, bigquery] = await Promise.all([
    startSpannerEmulator({
      port: setup.ports.spanner ?? 0,
      changeStreams: (db) => {
        const engine = createChangeStreamEngine({
          now: () => spannerClock(),
          initialPartitions: setup.initialPartitions,
          churnMs: setup.churnMs,
          dialect: db.dialect,
        });
        engines.set(db.name, engine.admin);
        return engine;
      },
    }),
    startGcsEmulator({ port: setup.ports.gcs ?? 0, buckets: [setup.bucket] }),
    startTasksEmulator({ port: setup.ports.tasks ?? 0, queues: setup.queues }),
    startBigQueryEmulator({
      grpcPort: setup.ports.bigqueryWrite ?? 0,
      restPort: setup.ports.bigqueryRest ?? 0,
      projectId: setup.projectId,
    }),
  ]);
  spannerClock = () => spanner.admin.nowNs();
  return {
    spanner,
    gcs,
    tasks,
    bigquery,
    changeStreams(database) {
      const admin = engines.get(database);
      if (!admin) throw new Error(`no change-stream engine for ${database}`);
      return admin;
    },
    async stop() {
      for (const e of engines.values()) e.close();
      await Promise.all([spanner.stop(), gcs.stop(), tasks.stop(), bigquery.stop()]);
    },
  };
}
