/**
 * Backfill throughput: a wide table of every GoogleSQL type loaded into the Spanner emulator, then backfilled
 * into the BigQuery emulator (replica and history) by the real worker use case (`runPartition`, official
 * clients, a few partitions at once) in this process — the emulators run in their own processes, so this
 * process's CPU time is the worker's. The ceiling is the bare Spanner client reading the same partitions
 * of the same snapshot, with no mapping and no writing. Memory is sampled during the backfill.
 */
import { MemoryObjectStore } from '../../shared/adapters/memory/object-store';
import { MemoryTaskQueue } from '../../shared/adapters/memory/task-queue';
import { getBackfill, runPartition, startBackfill } from '../../shared/app/backfill';
import type { BackfillDeps } from '../../shared/app/backfill/deps';
import { parseConfigObject } from '../../shared/domain/config';
import { createLogger } from '../../shared/domain/log';
import { fromEpochMillis } from '../../shared/domain/timestamp';
import { createAdapters } from '../../shared/wiring/adapters';
import { type Clients, createClients } from '../../shared/wiring/clients';
import { startChildEmulator } from './child-emulator';
import { profilePhase } from './profile';
import { memorySampler } from './stats';

const PROJECT = 'sluice-bench';
const DATABASE = `projects/${PROJECT}/instances/bench/databases/bench`;

/** Every GoogleSQL column type of the backfill table (key first). */
const WIDE = `CREATE TABLE Wide (Id INT64 NOT NULL, Name STRING(MAX), Qty INT64, Price FLOAT64, Ratio FLOAT32,
  Active BOOL, Amount NUMERIC, Born DATE, UpdatedAt TIMESTAMP, Raw BYTES(MAX), Doc JSON, Ref UUID,
  Tags ARRAY<STRING(MAX)>, Nums ARRAY<INT64>) PRIMARY KEY (Id)`;

function config(history: boolean) {
  return parseConfigObject({
    project: PROJECT,
    spanner: { instance: 'bench', database: 'bench', stream: 'Changes' },
    bigquery: { dataset: 'bench' },
    ledger: { bucket: 'bench' },
    tables: { Wide: history ? { replica: 'wide', history: 'wide_history' } : { replica: 'wide' } },
  });
}

function row(id: number) {
  return {
    Id: String(id),
    Name: `name ${id} ✓`,
    Qty: String(id % 1000),
    Price: (id % 100_000) / 7,
    Ratio: (id % 100) / 4,
    Active: id % 2 === 0,
    Amount: `${id}.${String(id % 1_000_000_000).padStart(9, '0')}`,
    Born: `19${String(10 + (id % 90))}-0${1 + (id % 9)}-1${id % 10}`,
    UpdatedAt: `2025-01-01T00:00:${String(id % 60).padStart(2, '0')}.${String(id % 1e9).padStart(9, '0')}Z`,
    Raw: Buffer.from(`raw-${id}`).toString('base64'),
    Doc: JSON.stringify({ id, tier: id % 5, tags: ['a', 'b'] }),
    Ref: `00000000-0000-4000-8000-${String(id).padStart(12, '0')}`,
    Tags: ['x', `t${id % 13}`],
    Nums: [String(id), String(-id)],
  };
}

/** Loads `rows` rows, 4,000 per commit (14 columns: 56,000 mutations), two commits at a time. */
async function load(clients: Clients, rows: number, report: (n: number) => void): Promise<void> {
  const table = clients.database.table('Wide');
  const per = 4_000;
  for (let i = 0; i < rows; i += 2 * per) {
    const commits = [i, i + per]
      .filter((from) => from < rows)
      .map((from) =>
        table.insert(Array.from({ length: Math.min(per, rows - from) }, (_, j) => row(from + j + 1))),
      );
    await Promise.all(commits);
    report(Math.min(rows, i + 2 * per));
  }
}

/** Runs the job's partition tasks, `concurrency` at a time, in this process. */
async function runTasks(deps: BackfillDeps, queue: MemoryTaskQueue, concurrency: number): Promise<number> {
  let done = 0;
  const worker = async () => {
    for (let task = queue.pending.shift(); task; task = queue.pending.shift()) {
      const outcome = await runPartition(deps, task.body as Parameters<typeof runPartition>[1]);
      if (outcome.kind === 'failed') throw new Error(`partition failed: ${outcome.error}`);
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return done;
}

/** Reads every partition of the table's query with the bare client (no mapping), `concurrency` at a time. */
async function bareRead(clients: Clients, sql: string, concurrency: number): Promise<number> {
  const [txn] = await clients.database.createBatchTransaction({ strong: true });
  const [partitions] = await txn.createQueryPartitions(sql);
  let rows = 0;
  const queue = [...partitions];
  const worker = async () => {
    for (let p = queue.shift(); p; p = queue.shift()) {
      for await (const r of txn.executeStream(p)) if (r !== undefined) rows++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  txn.close();
  return rows;
}

/** One measured run. */
export interface BackfillRun {
  rows: number;
  partitions: number;
  cpuMs: number;
  wallMs: number;
  /** Bare client over the same table: CPU and wall time. */
  ceilingCpuMs: number;
  ceilingWallMs: number;
  heapPeakMiB: number;
  rssPeakMiB: number;
  /** Absolute peak RSS of this process during the backfill. */
  rssMaxMiB: number;
  rowsPerSecond: number | null;
}

/** Options of {@link backfillThroughput}. */
export interface BackfillOptions {
  rows: number;
  runs: number;
  concurrency: number;
  /** Data per partition the emulator plans. */
  partitionBytes: number;
  /** Load the history table too (default: the replica only, as `startAt: snapshot` does). */
  history?: boolean;
  progress?: (message: string) => void;
  /** Writes a CPU profile of each backfill run (not the loading, not the bare client) into this folder. */
  profileDir?: string;
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
}

/** Loads the table once, then backfills it `runs` times (each a new job into fresh tables), interleaved with the ceiling. */
export async function backfillThroughput(o: BackfillOptions): Promise<BackfillRun[]> {
  process.env.METADATA_SERVER_DETECTION = 'none';
  const spanner = await startChildEmulator('spanner', [
    '--database',
    DATABASE,
    '--initial-partitions',
    '1',
    '--churn-ms',
    '0',
    '--partition-bytes',
    String(o.partitionBytes),
  ]);
  const bigquery = await startChildEmulator('bigquery', ['--project', PROJECT]);
  const previousHost = process.env.SPANNER_EMULATOR_HOST;
  process.env.SPANNER_EMULATOR_HOST = spanner.addresses.grpc;
  const cfg = config(o.history ?? false);
  const clients = createClients(cfg, {
    bigqueryRest: bigquery.addresses.rest,
    bigqueryWrite: bigquery.addresses.grpc,
  });
  try {
    const [op] = await clients.database.updateSchema([WIDE]);
    await op.promise();
    await load(clients, o.rows, (n) => o.progress?.(`loaded ${n} of ${o.rows} rows`));
    // The stream is created after loading: the backfill needs the table watched, not its changes.
    const [cs] = await clients.database.updateSchema(['CREATE CHANGE STREAM Changes FOR Wide']);
    await cs.promise();
    const runs: BackfillRun[] = [];
    for (let r = 0; r < o.runs; r++) {
      await clients.bigquery.dataset(`bench${r}`).create();
      const log = createLogger(() => undefined, {}, 'ERROR');
      const runCfg = { ...cfg, bigquery: { dataset: `bench${r}` } };
      const queue = new MemoryTaskQueue();
      const deps: BackfillDeps = {
        config: runCfg,
        store: new MemoryObjectStore(),
        queue,
        ...createAdapters(clients, runCfg, log),
        workerUrl: 'http://127.0.0.1:1/backfills/tasks',
        now: () => fromEpochMillis(Date.now()),
        newId: () => `bench${r}`,
        log,
      };
      const started = await startBackfill(deps, { tables: ['Wide'] });
      if (!started.ok) throw new Error(started.problems.join('; '));
      const memory = memorySampler(100);
      const stopProfile = await profilePhase(o.profileDir, `backfill-${r + 1}`);
      const cpu = process.cpuUsage();
      const wall = performance.now();
      // Progress as an operator sees it: the job view, every 10 s.
      const ticker = setInterval(() => {
        void getBackfill(deps, `bench${r}`).then((v) =>
          o.progress?.(
            `backfill: ${v?.partitions.done}/${v?.partitions.total} partitions, ${v?.rowsWritten} rows, ${v?.rowsPerSecond} rows/s`,
          ),
        );
      }, 10_000);
      const partitions = await runTasks(deps, queue, o.concurrency).finally(() => clearInterval(ticker));
      const used = cpuMs(cpu);
      const wallMs = performance.now() - wall;
      await stopProfile();
      const peak = memory.stop();
      const view = await getBackfill(deps, `bench${r}`);
      if (view?.state !== 'succeeded' || view.rowsWritten !== o.rows)
        throw new Error(`backfill ended ${view?.state} with ${view?.rowsWritten} rows`);
      o.progress?.(`backfill run ${r + 1}: ${o.rows} rows in ${(wallMs / 1000).toFixed(1)} s`);
      const [counted] = await clients.bigquery.query({ query: `SELECT COUNT(*) AS n FROM bench${r}.wide` });
      const inReplica = Number((counted[0] as { n: unknown }).n);
      if (inReplica !== o.rows) throw new Error(`the replica holds ${inReplica} rows, Spanner ${o.rows}`);
      const ceilingCpu = process.cpuUsage();
      const ceilingWall = performance.now();
      const read = await bareRead(clients, 'SELECT * FROM Wide', o.concurrency);
      if (read !== o.rows) throw new Error(`bare read saw ${read} rows`);
      runs.push({
        rows: o.rows,
        partitions,
        cpuMs: used,
        wallMs,
        ceilingCpuMs: cpuMs(ceilingCpu),
        ceilingWallMs: performance.now() - ceilingWall,
        heapPeakMiB: peak.heapMiB,
        rssPeakMiB: peak.rssMiB,
        rssMaxMiB: peak.rssMaxMiB,
        rowsPerSecond: view.rowsPerSecond,
      });
      await clients.bigquery.dataset(`bench${r}`).delete({ force: true });
    }
    return runs;
  } finally {
    await clients.close();
    await Promise.all([spanner.stop(), bigquery.stop()]);
    if (previousHost === undefined) delete process.env.SPANNER_EMULATOR_HOST;
    else process.env.SPANNER_EMULATOR_HOST = previousHost;
  }
}
