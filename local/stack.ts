import type { Database, Spanner } from '@google-cloud/spanner';
import type { Dialect } from '../shared/domain/change-record';
import type { Timestamp } from '../shared/domain/timestamp';
import { type CaptureType, createTable, type DemoSchema, type DemoTable, demoSchema } from './demo-schema';
import { type EmulatorPorts, type LocalEmulators, startEmulators } from './emulators';
import { emulatorClient } from './emulators/spanner/client';
import type { FunctionLogLine, FunctionName, FunctionProcess } from './function-process';
import { retargetRestoredTasks } from './function-urls';
import { keepPorts, keptPortsFile, stackPorts, withKeptPorts } from './kept-ports';
import { type PipelineProgress, readProgress } from './ledger-view';
import { FinishedPartitions } from './live-view';
import { assertPortsFree, PortInUseError } from './ports';
import { PROTO_BUNDLE_DDL, protoDescriptors } from './proto-types';
import { Random } from './random';
import { databaseName, LOCAL, queueName, type ReadyInfo, readyInfo } from './stack-config';
import { startFunctions } from './stack-functions';
import { type VerifyResult, verify, writerModsOf } from './verifier';
import { type CommittedMod, Workload } from './workload';

/** Options of {@link startLocalStack}; every one has a laptop-friendly default. */
export interface LocalStackOptions {
  dialect?: Dialect;
  mode?: 'scheduled' | 'continuous';
  /** Emulator and function ports (absent or 0: free ports). */
  ports?: EmulatorPorts & Partial<Record<FunctionName, number>>;
  /** Change-stream partitions of the demo stream (default 2). */
  initialPartitions?: number;
  /** Partition churn interval in ms (default 4000; 0: only through the admin handle). */
  churnMs?: number;
  /**
   * Backfill partitions read at once: the backfill queue's `maxConcurrentDispatches`, as the deployment sets
   * it (default 4, the deployment's default without Data Boost).
   */
  backfillConcurrency?: number;
  /** Data per backfill partition Spanner plans (the emulator's `partitionBytes`; default 4 MiB). */
  partitionBytes?: number;
  /** Value capture type of the demo stream (default `NEW_ROW_AND_OLD_VALUES`). */
  valueCaptureType?: CaptureType;
  /** More tables in the demo database: watched by its stream, replicated per their targets, verified. */
  extraTables?: DemoTable[];
  /** Start the four function processes (default true). */
  functions?: boolean;
  /**
   * Functions whose process starts on the first request to its port rather than with the stack (default
   * none; `npm start` starts all four). Test stacks name the backfill and the writer, which most runs never
   * call: each start costs about a CPU-second. Such a function checks its configuration on that request.
   */
  startOnFirstRequest?: FunctionName[];
  /** Extra or overriding environment variables of the functions. */
  functionEnv?: Record<string, string>;
  /** Called with every log line of every function. */
  onFunctionLog?: (line: FunctionLogLine) => void;
  /** Keep every emulator's state here across runs (`npm start -- --data-dir <dir>`); default in memory. */
  dataDir?: string;
}

/** A running local stack. */
export interface LocalStack {
  ready: ReadyInfo;
  schema: DemoSchema;
  emulators: LocalEmulators;
  /** True when the demo database was restored from `dataDir` rather than created. */
  restored: boolean;
  /** Official Spanner client and the demo database on the emulator. */
  spanner: Spanner;
  database: Database;
  /** Function processes (absent when started with `functions: false`). */
  functions: Partial<Record<FunctionName, FunctionProcess>>;
  /** Structured error lines of the functions seen so far (ERROR and worse), most recent last. */
  errors: FunctionLogLine[];
  /** Partitions the reader finished since the stack started (the ledger deletes finished entries). */
  finishedSinceStart(): number;
  /** A seeded workload on the demo database (not started). */
  workload(seed: number): Workload;
  /** One scheduler tick: `POST /` on the scheduler function, as Cloud Scheduler does. */
  tick(): Promise<{ status: number; body: unknown }>;
  /** Ticks every `intervalMs` until {@link stopTicking}; failed ticks are counted in `tickFailures`. */
  startTicking(intervalMs: number): void;
  stopTicking(): Promise<void>;
  tickFailures: number;
  /** Partition states and the watermark, from the ledger. */
  progress(): PipelineProgress;
  /** The status object the last tick wrote (what `GET /status` answers), or undefined before the first. */
  status(): Record<string, unknown> | undefined;
  /** Resolves true once the watermark is at or past `target`, false after `timeoutMs`. */
  waitForCatchUp(target: Timestamp, timeoutMs: number): Promise<boolean>;
  /** Compares every configured BigQuery table with Spanner (history against `journal` when given). */
  /**
   * Compares BigQuery with Spanner; `journalComplete` says the journal holds every change the stream
   * carried, so each history table must hold exactly its mods (see the verifier).
   */
  verify(
    journal?: CommittedMod[],
    options?: { journalComplete?: boolean; earlierRows?: Record<string, number> },
  ): Promise<VerifyResult>;
  /** Stops ticking, the functions, the client and the emulators. */
  stop(): Promise<void>;
}

/** Creates the demo database and dataset, or finds them restored from a data directory. */
async function createDemoDatabase(emulators: LocalEmulators, schema: DemoSchema, spanner: Spanner) {
  const database = spanner.instance(LOCAL.instance).database(LOCAL.database);
  if (emulators.spanner.admin.hasDatabase(databaseName())) {
    const dialect = emulators.spanner.admin.database(databaseName()).dialect;
    if (dialect !== schema.dialect)
      throw new Error(
        `the data directory holds a ${dialect} demo database; start with --dialect ${dialect === 'POSTGRESQL' ? 'postgresql' : 'googlesql'} or another --data-dir`,
      );
    return { database, restored: true };
  }
  emulators.spanner.admin.createDatabase(databaseName(), schema.dialect);
  const [operation] = await database.updateSchema({
    statements: schema.ddl,
    ...(schema.protoDescriptors ? { protoDescriptors: schema.protoDescriptors } : {}),
  });
  await operation.promise();
  await emulators.bigquery.bigquery().createDataset(LOCAL.dataset);
  return { database, restored: false };
}

async function postJson(url: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: keep the text.
  }
  return { status: res.status, body: parsed };
}

/**
 * The demo schema with more tables, created before the stream (which watches them all); a table named
 * `sch.T` gets its named schema created first.
 */
function withTables(schema: DemoSchema, extra: DemoTable[]): DemoSchema {
  if (extra.length === 0) return schema;
  const pg = schema.dialect === 'POSTGRESQL';
  // PROTO / ENUM columns need the local stack's proto bundle created first, with its descriptors.
  const protos = extra.some((t) => t.columns.some((c) => /^(proto|enum)(\[\])?$/.test(c.kind)));
  const named = [...new Set(extra.flatMap((t) => (t.name.includes('.') ? [t.name.split('.')[0]] : [])))];
  return {
    ...schema,
    tables: [...schema.tables, ...extra],
    ddl: [
      ...(protos ? [PROTO_BUNDLE_DDL] : []),
      ...named.map((s) => `CREATE SCHEMA ${s}`),
      ...extra.map((t) => createTable(t, pg)),
      ...schema.ddl,
    ],
    ...(protos ? { protoDescriptors: protoDescriptors() } : {}),
  };
}

/**
 * Starts the local stack. @throws PortInUseError when a requested port is taken (nothing is started);
 * any other failure stops whatever had started before it is rethrown.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const schema = withTables(
    demoSchema(options.dialect ?? 'GOOGLE_STANDARD_SQL', options.valueCaptureType),
    options.extraTables ?? [],
  );
  // A data directory keeps the ports of its first start: a restart answers on the same addresses.
  const keptFile = options.dataDir ? keptPortsFile(options.dataDir, 'stack') : undefined;
  const { ports, kept } = keptFile
    ? withKeptPorts(keptFile, { ...options.ports })
    : { ports: { ...options.ports }, kept: new Set<string>() };
  await assertPortsFree(ports).catch((err: unknown) => {
    if (err instanceof PortInUseError && kept.has(err.role))
      throw new PortInUseError(err.port, err.role, keptFile);
    throw err;
  });
  const emulators = await startEmulators({
    projectId: LOCAL.projectId,
    ports,
    bucket: LOCAL.bucket,
    queues: [
      queueName('reader'),
      {
        name: queueName('backfill'),
        rateLimits: { maxConcurrentDispatches: options.backfillConcurrency ?? 4 },
      },
    ],
    initialPartitions: options.initialPartitions ?? 2,
    churnMs: options.churnMs ?? 4_000,
    ...(options.partitionBytes ? { partitionBytes: options.partitionBytes } : {}),
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
  });
  const spanner = emulatorClient(emulators.spanner, LOCAL.projectId);
  const functions: Partial<Record<FunctionName, FunctionProcess>> = {};
  try {
    const { database, restored } = await createDemoDatabase(emulators, schema, spanner);
    const errors: FunctionLogLine[] = [];
    const finished = new FinishedPartitions();
    const onLine = (line: FunctionLogLine) => {
      finished.observe(line);
      if (['ERROR', 'CRITICAL', 'ALERT', 'EMERGENCY'].includes(line.severity)) errors.push(line);
      if (errors.length > 200) errors.shift();
      options.onFunctionLog?.(line);
    };
    const endpoints = await startFunctions({ ...options, ports }, schema, emulators, onLine, functions);
    if (keptFile) {
      const listening = Object.fromEntries(Object.values(functions).map((f) => [f.name, f.port]));
      keepPorts(keptFile, stackPorts({ emulators, functions: listening }));
    }
    const urls = {
      scheduler: functions.scheduler?.url ?? null,
      reader: functions.reader?.url ?? null,
      backfill: functions.backfill?.url ?? null,
      writer: functions.writer?.url ?? null,
    };
    if (options.dataDir) retargetRestoredTasks(options.dataDir, emulators.tasks.admin, urls);
    const admin = {
      spanner: emulators.spanner.adminUrl,
      gcs: emulators.gcs.adminUrl ?? '',
      tasks: emulators.tasks.adminUrl ?? '',
      bigquery: emulators.bigquery.adminUrl ?? '',
      lineage: emulators.lineage.adminUrl ?? '',
    };
    return assemble(
      { schema, emulators, spanner, database, functions, errors, restored, finished },
      readyInfo(schema, endpoints, admin, urls),
    );
  } catch (err) {
    await Promise.all(Object.values(functions).map((f) => f.stop()));
    spanner.close();
    await emulators.stop();
    throw err;
  }
}

/** The parts {@link assemble} puts together: the public ones, and the tally behind `finishedSinceStart`. */
type Parts = Pick<
  LocalStack,
  'schema' | 'emulators' | 'restored' | 'spanner' | 'database' | 'functions' | 'errors'
> & { finished: FinishedPartitions };

function assemble(p: Parts, ready: ReadyInfo): LocalStack {
  let ticker: { stop: boolean; done: Promise<void> } | null = null;
  // The verifier's counting queries go through the official client, as a user's SQL would.
  const bigquery = p.emulators.bigquery.bigquery();
  const { finished, ...parts } = p;
  const stack: LocalStack = {
    ...parts,
    finishedSinceStart: () => finished.count,
    ready,
    tickFailures: 0,
    workload: (seed) => new Workload(p.database, p.schema, new Random(seed)),
    async tick() {
      const url = p.functions.scheduler?.url;
      if (!url) throw new Error('the scheduler function is not running');
      return postJson(url, {});
    },
    startTicking(intervalMs) {
      if (ticker) return;
      const t = { stop: false, done: Promise.resolve() };
      t.done = (async () => {
        while (!t.stop) {
          const answer = await stack.tick().catch(() => ({ status: 0, body: undefined }));
          if (answer.status < 200 || answer.status >= 300) stack.tickFailures++;
          for (let waited = 0; waited < intervalMs && !t.stop; waited += 100) {
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      })();
      ticker = t;
    },
    async stopTicking() {
      if (!ticker) return;
      ticker.stop = true;
      await ticker.done;
      ticker = null;
    },
    progress: () => readProgress(p.emulators.gcs.admin, LOCAL.bucket, LOCAL.pipeline),
    status: () => {
      const text = p.emulators.gcs.admin.read(LOCAL.bucket, `${LOCAL.pipeline}/status.json`);
      return text ? (JSON.parse(text.toString('utf8')) as Record<string, unknown>) : undefined;
    },
    async waitForCatchUp(target, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const w = stack.progress().watermark;
        if (w !== null && w >= target) return true;
        await new Promise((r) => setTimeout(r, 250));
      }
      return false;
    },
    verify: (journal, options = {}) =>
      verify({
        database: p.database,
        tables: p.schema.tables,
        dataset: LOCAL.dataset,
        project: LOCAL.projectId,
        bigqueryRows: (d, t) => p.emulators.bigquery.admin.tableRows(d, t) as Array<Record<string, unknown>>,
        bigqueryQuery: async (sql) => (await bigquery.query({ query: sql }))[0],
        journal,
        // The writer runs in the stack: what it applied during this run is expected in history too.
        writerMods: writerModsOf(p.emulators.spanner.admin.batchWrites(databaseName())),
        ...options,
      }),
    async stop() {
      await stack.stopTicking();
      await Promise.all(Object.values(p.functions).map((f) => f.stop()));
      await p.database.close();
      p.spanner.close();
      await p.emulators.stop();
    },
  };
  return stack;
}
