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
import { CountingHistory, CountingReplica, type Counts, RecordingSource } from './reader-ports';
import { memorySampler } from './stats';

const PROJECT = 'sluice-bench';
const DATABASE = `projects/${PROJECT}/instances/bench/databases/bench`;

/** One run of one variant. */
export interface ThroughputRun {
  variant: string;
  mods: number;
  cpuMs: number;
  wallMs: number;
  heapPeakMiB: number;
  rssPeakMiB: number;
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
async function runOnce(ports: SourceAndSinks, v: Variant, start: Timestamp, until: Timestamp) {
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
  const memory = memorySampler();
  const cpu = process.cpuUsage();
  const wall = performance.now();
  for (let i = 0; i < 50 && queue.pending.length > 0; i++) {
    const task = queue.pending.shift();
    if (!task) break;
    const parsed = readerTaskSchema.parse(task.body);
    if (parsed.position >= until) continue;
    const out = await app.reader.run(parsed);
    if (out.status !== 200) throw new Error(`reader answered ${out.status}: ${out.detail}`);
  }
  const used = process.cpuUsage(cpu);
  const wallMs = performance.now() - wall;
  const peak = memory.stop();
  return {
    variant: v.name,
    mods: counts.history,
    cpuMs: (used.user + used.system) / 1000,
    wallMs,
    heapPeakMiB: peak.heapMiB,
    rssPeakMiB: peak.rssMiB,
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
      readerQueue: 'reader',
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
    runs.push(await runOnce(real, { name: 'warm-up', ...real, source: recording }, start, until));
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
        runs.push(await runOnce(ports, v, start, until));
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
