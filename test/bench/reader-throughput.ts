/**
 * Reader throughput on one core: a window of many mods read from the Spanner emulator through the official
 * client, decoded, mapped and encoded for the Storage Write API into the BigQuery emulator — the emulators run
 * in their own processes, so the CPU time of this process is the reader's. The same window is then run with
 * each side replaced by the in-process adapters (`shared/adapters/memory/`) to show where the time goes, and
 * the reader's memory peak during the large window is sampled.
 */
import type { BigQueryHistorySink } from '../../shared/adapters/bigquery/history-sink';
import { MemoryObjectStore } from '../../shared/adapters/memory/object-store';
import {
  MemoryCompletenessSink,
  MemoryHistorySink,
  MemoryReplicaSink,
} from '../../shared/adapters/memory/sinks';
import { MemoryTaskQueue } from '../../shared/adapters/memory/task-queue';
import type { AppSettings } from '../../shared/app/common/settings';
import { readerTaskSchema } from '../../shared/app/replication/common/reader-task';
import { parseConfigObject } from '../../shared/domain/config';
import { createLogger } from '../../shared/domain/log';
import { addMillis, formatTimestamp, fromEpochMillis, type Timestamp } from '../../shared/domain/timestamp';
import type { ChangeSource } from '../../shared/ports/change-source';
import type { HistorySink, ReplicaSink } from '../../shared/ports/sinks';
import { assembleApp } from '../../shared/wiring/app';
import { type Clients, createClients } from '../../shared/wiring/clients';
import { pipelineAdapters, type SourceAndSinks } from '../../shared/wiring/pipeline-adapters';
import type { DeploymentSettings } from '../../shared/wiring/settings';
import { AtLeastOnceHistory } from './at-least-once-history';
import { startChildEmulator } from './child-emulator';
import { profilePhase } from './profile';
import { CountingHistory, CountingReplica, type Counts, RecordingSource } from './reader-ports';
import { collectGarbage, memorySampler } from './stats';

const PROJECT = 'sluice-bench';
const DATABASE = `projects/${PROJECT}/instances/bench/databases/bench`;

/** One run of one variant. */
export interface ThroughputRun {
  variant: string;
  /** The round (0-based) the run belongs to: one run of each variant, one after the other; -1 for the warm-up. */
  round: number;
  mods: number;
  cpuMs: number;
  wallMs: number;
  heapPeakMiB: number;
  rssPeakMiB: number;
  /** The process's highest RSS during the run (its earlier runs' heap included). */
  rssMaxMiB: number;
}

const DDL = [
  `CREATE TABLE Items (Id INT64 NOT NULL, Name STRING(MAX), Qty INT64, Price FLOAT64, Tags ARRAY<STRING(MAX)>,
   Note STRING(MAX), UpdatedAt TIMESTAMP) PRIMARY KEY (Id)`,
  // The dimension of the enrichment variants: every Items row's Qty (0-96) names one of its rows.
  `CREATE TABLE Dims (Id INT64 NOT NULL, Label STRING(MAX)) PRIMARY KEY (Id)`,
  `CREATE CHANGE STREAM Changes FOR ALL OPTIONS (value_capture_type = 'NEW_ROW_AND_OLD_VALUES')`,
  // The same changes without full rows: every replica row is read at its commit timestamp (batched).
  `CREATE CHANGE STREAM ChangedValues FOR ALL OPTIONS (value_capture_type = 'NEW_VALUES')`,
];

/** The lookup of the enrichment variants: Items.Qty → Dims.Id, bringing Label. */
const LOOKUPS = {
  'as-of-commit': [{ table: 'Dims', key: { Id: 'Qty' }, columns: ['Label'], prefix: 'dim_' }],
  latest: [{ table: 'Dims', key: { Id: 'Qty' }, columns: ['Label'], prefix: 'dim_', mode: 'latest' }],
} as const;

function config(startAt: Timestamp, stream = 'Changes', lookup?: keyof typeof LOOKUPS) {
  // Each lookup mode writes its own tables: the enriched columns would otherwise widen the plain ones.
  const suffix = lookup ? `_${lookup.replaceAll('-', '_')}` : '';
  const items = { replica: `items${suffix}`, history: `items_history${suffix}` };
  return parseConfigObject({
    project: PROJECT,
    spanner: { instance: 'bench', database: 'bench', stream },
    bigquery: { dataset: 'bench' },
    ledger: { bucket: 'bench' },
    tables: { Items: lookup ? { ...items, lookups: LOOKUPS[lookup] } : items },
    startAt: formatTimestamp(startAt),
    window: { maxMs: 10 * 60_000, longPollMs: 1_000 },
  });
}

/** Commits `mods` inserts, `perTxn` per transaction, a few transactions at a time; `Note` has `noteBytes`. */
async function load(
  clients: Clients,
  mods: number,
  perTxn: number,
  from: number,
  noteBytes = 40,
): Promise<void> {
  const table = clients.database.table('Items');
  const txns = Math.ceil(mods / perTxn);
  for (let t = 0; t < txns; t += 4) {
    const batch = [];
    for (let k = t; k < Math.min(txns, t + 4); k++) {
      const rows = Array.from({ length: perTxn }, (_, i) => {
        const id = from + k * perTxn + i;
        return {
          Id: String(id),
          Name: `item ${id}`,
          Qty: String(id % 97),
          Price: (id % 1000) / 7,
          Tags: ['a', `t${id % 13}`],
          Note: 'x'.repeat(noteBytes),
          UpdatedAt: new Date(1_750_000_000_000 + id).toISOString(),
        };
      });
      batch.push(table.insert(rows));
    }
    await Promise.all(batch);
  }
}

interface Variant {
  name: string;
  source: ChangeSource;
  replica: ReplicaSink;
  history: HistorySink;
  /** The change stream read (default `Changes`, full rows). */
  stream?: string;
  /** Enrich Items by one lookup of Dims in this mode. */
  lookup?: keyof typeof LOOKUPS;
}

/** Runs the pipeline's scheduler (unmeasured) and then reader tasks (measured) until `until` is reached. */
async function runOnce(
  ports: SourceAndSinks,
  v: Variant,
  start: Timestamp,
  until: Timestamp,
  round: number,
): Promise<ThroughputRun> {
  const counts: Counts = { replica: 0, history: 0 };
  const queue = new MemoryTaskQueue();
  const cfg = config(start, v.stream, v.lookup);
  const settings: AppSettings = {
    config: cfg,
    readerUrl: 'http://127.0.0.1:1/reader',
    retentionMarginMs: 3_600_000,
    idleDelayMs: 5_000,
  };
  const runtime = { now: () => fromEpochMillis(Date.now()), log: createLogger(() => undefined, {}, 'ERROR') };
  const app = assembleApp(
    {
      ...ports,
      source: v.source,
      replica: new CountingReplica(v.replica, counts),
      history: new CountingHistory(v.history, counts),
      store: new MemoryObjectStore(),
      queue,
    },
    settings,
    runtime,
  );
  await app.scheduler.tick();
  await app.scheduler.tick();
  // A run pays neither for the garbage the previous one left nor (much) for the sampling: every 50 ms, as
  // process.memoryUsage() costs about 0.1 ms, which at 10 ms was a few per cent of a slow variant's CPU.
  collectGarbage();
  const memory = memorySampler(50);
  const cpu = process.cpuUsage();
  const wall = performance.now();
  for (let i = 0; i < 50 && queue.pending.length > 0; i++) {
    const task = queue.pending.shift();
    if (!task) break;
    const parsed = readerTaskSchema.parse(task.body);
    if (parsed.position >= until) continue;
    const out = await app.reader.run(parsed);
    // A failed window is answered 200 (the partition records its failure): a benchmark must not count it.
    if (out.status !== 200 || out.outcome === 'failed')
      throw new Error(`${v.name}: the reader answered ${out.status} (${out.outcome}): ${out.detail}`);
  }
  const used = process.cpuUsage(cpu);
  const wallMs = performance.now() - wall;
  const peak = memory.stop();
  return {
    variant: v.name,
    round,
    mods: counts.history,
    cpuMs: (used.user + used.system) / 1000,
    wallMs,
    heapPeakMiB: peak.heapMiB,
    rssPeakMiB: peak.rssMiB,
    rssMaxMiB: peak.rssMaxMiB,
  };
}

/** Options of {@link readerThroughput}. */
export interface ThroughputOptions {
  mods: number;
  modsPerTransaction: number;
  runs: number;
  /** Only these variants (by name); all by default. */
  only?: string[];
  /** Size of each row's `Note` string (default 40 bytes). */
  noteBytes?: number;
  /** Where each measured run's CPU profile goes (`reader-<variant>-<run>.cpuprofile`); none when absent. */
  profileDir?: string;
}

/** Runs every variant `runs` times (interleaved) and returns every run. */
export async function readerThroughput(o: ThroughputOptions): Promise<ThroughputRun[]> {
  process.env.METADATA_SERVER_DETECTION = 'none';
  const spannerArgs = ['--database', DATABASE, '--initial-partitions', '1', '--churn-ms', '0'];
  const spanner = await startChildEmulator('spanner', spannerArgs);
  const bigquery = await startChildEmulator('bigquery', ['--project', PROJECT]);
  // The official client finds the emulator through this variable; restored afterwards, or a later Spanner
  // client in this process would dial the stopped emulator.
  const previousHost = process.env.SPANNER_EMULATOR_HOST;
  process.env.SPANNER_EMULATOR_HOST = spanner.addresses.grpc;
  const cfg = config(fromEpochMillis(Date.now()));
  const endpoints = { bigqueryRest: bigquery.addresses.rest, bigqueryWrite: bigquery.addresses.grpc };
  const clients = createClients(cfg, endpoints);
  try {
    const [op] = await clients.database.updateSchema(DDL);
    await op.promise();
    await clients.bigquery.createDataset('bench');
    // The stream's history begins when it was created: start just after that.
    await new Promise((r) => setTimeout(r, 50));
    const start = addMillis(fromEpochMillis(Date.now()), -10);
    await clients.database
      .table('Dims')
      .insert(Array.from({ length: 97 }, (_, i) => ({ Id: String(i), Label: `dim ${i}` })));
    await load(clients, o.mods, o.modsPerTransaction, 1, o.noteBytes);
    const until = fromEpochMillis(Date.now());
    const deployment: DeploymentSettings = {
      readerUrl: 'http://127.0.0.1:1/reader',
      readerQueues: ['reader'],
      backfillQueue: undefined,
      tasksServiceAccount: undefined,
      retentionMarginMs: 3_600_000,
      idleDelayMs: 5_000,
      requestPriority: 'low',
      dispatchDeadlineSeconds: 1_800,
    };
    const real = pipelineAdapters(
      clients,
      cfg,
      deployment,
      createLogger(() => undefined, {}, 'ERROR'),
    );
    const atLeastOnce = new AtLeastOnceHistory(
      { bigquery: clients.bigquery, writer: clients.writer },
      { projectId: PROJECT, dataset: 'bench' },
      real.history as BigQueryHistorySink,
    );
    const recording = new RecordingSource(real.source);
    const valuesOnly = pipelineAdapters(
      clients,
      config(start, 'ChangedValues'),
      deployment,
      createLogger(() => undefined, {}, 'ERROR'),
    );
    const runs: ThroughputRun[] = [];
    // The first run records the window for the in-process source (and warms the clients up).
    runs.push(await runOnce(real, { name: 'warm-up', ...real, source: recording }, start, until, -1));
    const memorySource = recording.replay();
    for (let r = 0; r < o.runs; r++) {
      const memorySinks = () => ({ replica: new MemoryReplicaSink(), history: new MemoryHistorySink() });
      const variants: Variant[] = [
        { name: 'emulators', source: real.source, replica: real.replica, history: real.history },
        {
          name: 'emulators, at-least-once history',
          source: real.source,
          replica: real.replica,
          history: atLeastOnce,
        },
        { name: 'spanner → memory sinks', source: real.source, ...memorySinks() },
        { name: 'memory → bigquery', source: memorySource, replica: real.replica, history: real.history },
        { name: 'memory → memory', source: memorySource, ...memorySinks() },
        {
          name: 'emulators, one as-of-commit lookup',
          source: real.source,
          replica: real.replica,
          history: real.history,
          lookup: 'as-of-commit',
        },
        {
          name: 'emulators, one latest lookup',
          source: real.source,
          replica: real.replica,
          history: real.history,
          lookup: 'latest',
        },
        {
          name: 'emulators, read at commit (NEW_VALUES)',
          source: valuesOnly.source,
          replica: real.replica,
          history: real.history,
          stream: 'ChangedValues',
        },
      ];
      // The lookup variants run only when named (`--only reader-enrichment` and the full run name them).
      for (const v of variants.filter((x) => (o.only ? o.only.includes(x.name) : !x.lookup))) {
        const base = v.stream === 'ChangedValues' ? valuesOnly : real;
        const ports = { ...base, completeness: new MemoryCompletenessSink() };
        const name = `reader-${v.name.replace(/[^a-z0-9]+/gi, '-').replace(/-+$/, '')}-${r + 1}`;
        const stop = await profilePhase(o.profileDir, name);
        const run = await runOnce(ports, v, start, until, r);
        const read = runs[0]?.mods;
        if (run.mods !== read)
          throw new Error(`${v.name}: ${run.mods} mods reached the history, the window holds ${read}`);
        runs.push(run);
        await stop();
      }
    }
    return runs;
  } finally {
    await clients.close();
    await Promise.all([spanner.stop(), bigquery.stop()]);
    if (previousHost === undefined) delete process.env.SPANNER_EMULATOR_HOST;
    else process.env.SPANNER_EMULATOR_HOST = previousHost;
  }
}
