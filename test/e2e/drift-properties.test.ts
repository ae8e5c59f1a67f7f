/**
 * A property over random sequences of schema changes interleaved with writes, both dialects: columns added
 * (of several types) and dropped, tables created (some with a stored generated column) — each while other
 * writes keep committing, to the changed table too — and rows inserted, updated and deleted, under each value
 * capture type. The whole pipeline runs in-process (scheduler ticks, reader tasks) over the Spanner and
 * BigQuery emulators through the official clients, with the all-tables form of SLUICE_TABLES, reading along
 * all the while.
 * After catch-up every replica equals Spanner row for row on Spanner's current columns, and every history
 * table holds exactly the mods committed to its table.
 */
process.env.METADATA_SERVER_DETECTION = 'none';
delete process.env.BIGQUERY_EMULATOR_HOST;

import type { Database } from '@google-cloud/spanner';
import fc from 'fast-check';
import { type BigQueryEmulator, startBigQueryEmulator } from '../../local/emulators/bigquery/emulator';
import { createTestDatabase } from '../../local/emulators/spanner/client';
import { type RunningSpannerEmulator, startSpannerEmulator } from '../../local/emulators/spanner/server';
import { BigQueryCompletenessSink } from '../../shared/adapters/bigquery/completeness-sink';
import { BigQueryHistorySink } from '../../shared/adapters/bigquery/history-sink';
import { BigQueryReplicaSink } from '../../shared/adapters/bigquery/replica-sink';
import { MemoryObjectStore } from '../../shared/adapters/memory/object-store';
import { MemoryTaskQueue } from '../../shared/adapters/memory/task-queue';
import { SpannerCatalogReader } from '../../shared/adapters/spanner/catalog';
import { SpannerChangeSource } from '../../shared/adapters/spanner/change-source';
import { readerTaskSchema } from '../../shared/app/replication/common/reader-task';
import type { Dialect } from '../../shared/domain/change-record';
import { parseConfigObject } from '../../shared/domain/config';
import { createLogger } from '../../shared/domain/log';
import {
  formatTimestamp,
  fromEpochMillis,
  fromSecondsAndNanos,
  parseTimestamp,
} from '../../shared/domain/timestamp';
import { assembleApp } from '../../shared/wiring/app';

const PROJECT = 'test-project';
let spanner: RunningSpannerEmulator;
let bigquery: BigQueryEmulator;
let datasets = 0;
/** Names added columns uniquely (a dropped name is never reused within a run). */
let added = 0;

beforeAll(async () => {
  spanner = await startSpannerEmulator({ port: 0, churnMs: 0, partitions: 2 });
  bigquery = await startBigQueryEmulator({ grpcPort: 0, restPort: 0, projectId: PROJECT });
});

afterAll(async () => {
  await bigquery?.stop();
  await spanner?.stop();
});

/** Every capture type: full rows from the records, or rows read at each commit timestamp. */
const CAPTURE = ['NEW_ROW_AND_OLD_VALUES', 'NEW_ROW', 'NEW_VALUES', 'OLD_AND_NEW_VALUES'] as const;

type Kind = 'int' | 'string' | 'bool' | 'float';
const KINDS: Kind[] = ['int', 'string', 'bool', 'float'];
const TYPES: Record<Dialect, Record<Kind, string>> = {
  GOOGLE_STANDARD_SQL: { int: 'INT64', string: 'STRING(MAX)', bool: 'BOOL', float: 'FLOAT64' },
  POSTGRESQL: { int: 'bigint', string: 'varchar', bool: 'boolean', float: 'float8' },
};

/** What the test knows of one table: its writable columns, the live keys, the mods committed. */
interface ModelTable {
  name: string;
  columns: Array<{ name: string; kind: Kind }>;
  /** A stored generated column reading `a` (never dropped, `a` then neither). */
  generated: boolean;
  keys: Set<number>;
  mods: number;
}

/** One abstract step; numbers pick tables, columns, keys and values modulo what exists. */
type Op =
  | { op: 'write'; table: number; key: number; value: number; delete: boolean }
  | { op: 'add'; table: number; kind: number }
  | { op: 'drop'; table: number; column: number }
  | { op: 'create'; generated: boolean };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant('write' as const),
      table: fc.nat(),
      key: fc.nat(7),
      value: fc.integer({ min: -999, max: 999 }),
      delete: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('add' as const), table: fc.nat(), kind: fc.nat(3) }) },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('drop' as const), table: fc.nat(), column: fc.nat() }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('create' as const), generated: fc.boolean() }) },
);

function value(kind: Kind, v: number): unknown {
  if (kind === 'int') return String(v);
  if (kind === 'bool') return v % 2 === 0;
  if (kind === 'float') return v / 4;
  return `s${v}`;
}

async function ddl(db: Database, statement: string): Promise<void> {
  const [op] = await db.updateSchema([statement]);
  await op.promise();
}

function createStatement(dialect: Dialect, t: ModelTable): string {
  const pg = dialect === 'POSTGRESQL';
  const gen = t.generated
    ? pg
      ? ', g varchar GENERATED ALWAYS AS (upper(a)) STORED'
      : ', g STRING(MAX) AS (UPPER(a)) STORED'
    : '';
  return pg
    ? `CREATE TABLE ${t.name} (id bigint NOT NULL PRIMARY KEY, a varchar${gen})`
    : `CREATE TABLE ${t.name} (id INT64 NOT NULL, a STRING(MAX)${gen}) PRIMARY KEY (id)`;
}

/** Upserts (or deletes) one row naming `columns`, and counts its mod in the model; its commit timestamp. */
async function write(
  db: Database,
  t: ModelTable,
  columns: ModelTable['columns'],
  w: { key: number; value: number; delete: boolean },
): Promise<bigint> {
  const exists = t.keys.has(w.key);
  const [resp] =
    w.delete && exists
      ? await db.table(t.name).deleteRows([String(w.key)])
      : await db.table(t.name).upsert({
          id: String(w.key),
          ...Object.fromEntries(columns.map((c, i) => [c.name, value(c.kind, w.value + i)])),
        });
  if (w.delete && exists) t.keys.delete(w.key);
  else t.keys.add(w.key);
  // A write of an existing row that names no non-key column changes nothing: no change record.
  const noop = !(w.delete && exists) && exists && columns.length === 0;
  if (!noop) t.mods++;
  const ts = resp.commitTimestamp as { seconds?: unknown; nanos?: unknown };
  return fromSecondsAndNanos(String(ts.seconds ?? 0), Number(ts.nanos ?? 0));
}

/** Applies one schema change to Spanner; the model changes once it is done. */
async function changeSchema(
  db: Database,
  dialect: Dialect,
  tables: ModelTable[],
  op: Exclude<Op, { op: 'write' }>,
) {
  const t = tables[('table' in op ? op.table : 0) % tables.length] as ModelTable;
  if (op.op === 'create') {
    const created: ModelTable = {
      name: `t${tables.length}`,
      columns: [{ name: 'a', kind: 'string' }],
      generated: op.generated,
      keys: new Set(),
      mods: 0,
    };
    await ddl(db, createStatement(dialect, created));
    tables.push(created);
    return;
  }
  if (op.op === 'add') {
    const kind = KINDS[op.kind] as Kind;
    const name = `c${++added}_${kind}`;
    await ddl(db, `ALTER TABLE ${t.name} ADD COLUMN ${name} ${TYPES[dialect][kind]}`);
    t.columns.push({ name, kind });
    return;
  }
  const c = dropTarget(t, op.column);
  if (!c) return;
  await ddl(db, `ALTER TABLE ${t.name} DROP COLUMN ${c.name}`);
  t.columns = t.columns.filter((x) => x !== c);
}

/** The column a drop step removes (`a` stays while a generated column reads it). */
function dropTarget(t: ModelTable, n: number): ModelTable['columns'][number] | undefined {
  const droppable = t.columns.filter((c) => !(t.generated && c.name === 'a'));
  return droppable[n % Math.max(1, droppable.length)];
}

/**
 * Applies one step. A schema change is made while a writer keeps committing — to every existing table, the
 * changed one included, naming only columns that exist before and after the change — so a transaction begun
 * before the change commits after it, and rows follow right behind it. Returns the latest commit timestamp
 * written (0n when none).
 */
async function apply(
  db: Database,
  dialect: Dialect,
  tables: ModelTable[],
  op: Op,
  seed: number,
): Promise<bigint> {
  if (op.op === 'write') {
    const t = tables[op.table % tables.length] as ModelTable;
    return write(db, t, t.columns, op);
  }
  const existing = [...tables];
  const changed = 'table' in op ? (tables[op.table % tables.length] as ModelTable) : undefined;
  const dropped = op.op === 'drop' && changed ? dropTarget(changed, op.column) : undefined;
  let done = false;
  let last = 0n;
  const writes = (async () => {
    for (let i = 0; i < 12 && (i < 2 || !done); i++) {
      const t = existing[(seed + i) % existing.length] as ModelTable;
      const columns = t.columns.filter((c) => c !== dropped);
      const at = await write(db, t, columns, {
        key: (seed + i) % 8,
        value: seed + i,
        delete: (seed + i) % 5 === 0,
      });
      if (at > last) last = at;
    }
  })();
  try {
    await changeSchema(db, dialect, tables, op);
  } finally {
    done = true;
    await writes;
  }
  return last;
}

/** The in-process pipeline over the emulators. */
async function pipeline(db: Database, dialect: Dialect, dataset: string) {
  const bq = bigquery.bigquery();
  await bq.createDataset(dataset);
  const clients = { bigquery: bq, writer: bigquery.writerClient() };
  const ref = { projectId: PROJECT, dataset };
  const config = parseConfigObject({
    project: PROJECT,
    spanner: { instance: 'inst', database: 'db', stream: 'changes' },
    bigquery: { dataset },
    ledger: { bucket: 'ledger' },
    tables: { '*': { replica: true, history: true } },
    startAt: formatTimestamp(fromEpochMillis(Date.now())),
    window: { maxMs: 60_000, longPollMs: 1_000 },
    heartbeatMs: 1_000,
  });
  const queue = new MemoryTaskQueue();
  const log = createLogger(() => undefined, {}, 'ERROR');
  const replica = new BigQueryReplicaSink(clients, ref);
  const history = new BigQueryHistorySink(clients, ref);
  const app = assembleApp(
    {
      store: new MemoryObjectStore(),
      queue,
      source: new SpannerChangeSource(db, { dialect, stream: 'changes' }),
      catalog: new SpannerCatalogReader(db),
      replica,
      history,
      completeness: new BigQueryCompletenessSink(clients, ref),
    },
    { config, readerUrl: 'http://127.0.0.1:1/reader', retentionMarginMs: 3_600_000, idleDelayMs: 1 },
    { now: () => fromEpochMillis(Date.now()), log },
  );
  /** One scheduler tick and the reader tasks it left queued; the watermark after the tick. */
  const step = async (): Promise<bigint | null> => {
    const report = await app.scheduler.tick();
    const w = report.status?.watermark;
    for (let i = 0; i < 20 && queue.pending.length > 0; i++) {
      const task = queue.pending.shift();
      if (!task) break;
      const out = await app.reader.run(readerTaskSchema.parse(task.body));
      if (out.outcome === 'failed') throw new Error(`reader failed: ${out.detail}`);
    }
    return w ? parseTimestamp(w) : null;
  };
  /** Ticks and runs reader tasks until the watermark passes `target`. */
  const catchUp = async (target: bigint) => {
    for (let round = 0; round < 200; round++) {
      const w = await step();
      if (w !== null && w >= target) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the pipeline did not catch up');
  };
  /** Keeps the pipeline reading while the steps run; the returned function stops it (and rethrows). */
  const readAlong = () => {
    let stopped = false;
    const running = (async () => {
      while (!stopped) {
        await step();
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    // A failure surfaces when stopped (not as an unhandled rejection in between).
    running.catch(() => undefined);
    return async () => {
      stopped = true;
      await running;
    };
  };
  const close = () => {
    replica.close();
    history.close();
  };
  return { app, catchUp, readAlong, bq, close };
}

function text(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'object' && 'value' in (v as object)) return String((v as { value: unknown }).value);
  return String(v);
}

async function compare(db: Database, dataset: string, tables: ModelTable[]): Promise<void> {
  for (const t of tables) {
    const [rows] = await db.run({
      sql: `SELECT * FROM ${t.name}`,
      json: true,
      jsonOptions: { wrapNumbers: true },
    });
    const spannerRows = (rows as Array<Record<string, unknown>>).map((r) =>
      Object.fromEntries(Object.entries(r).map(([k, v]) => [k, text(v)])),
    );
    const columns = spannerRows.length > 0 ? Object.keys(spannerRows[0] as object) : [];
    const replica = t.mods > 0 ? bigquery.admin.tableRows(dataset, t.name) : [];
    const replicaRows = replica.map((r) => Object.fromEntries(columns.map((c) => [c, text(r[c])])));
    const byId = (a: Record<string, string | null>, b: Record<string, string | null>) =>
      Number(a.id) - Number(b.id);
    expect({ table: t.name, rows: replicaRows.sort(byId) }).toEqual({
      table: t.name,
      rows: spannerRows.sort(byId),
    });
    // Exactly once in the raw table (ADR-1601): as many rows as mods, each change_id once.
    const history = t.mods > 0 ? bigquery.admin.tableRows(dataset, `${t.name}_history`) : [];
    const ids = new Set(history.map((h) => h.change_id));
    expect({ table: t.name, rows: history.length, ids: ids.size }).toEqual({
      table: t.name,
      rows: t.mods,
      ids: t.mods,
    });
  }
}

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  'random DDL interleaved with writes (%s)',
  (dialect) => {
    it('leaves every replica equal to Spanner and every history complete', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...CAPTURE),
          fc.array(opArb, { minLength: 8, maxLength: 24 }),
          async (capture, ops) => {
            const pg = dialect === 'POSTGRESQL';
            const base: ModelTable = {
              name: 't0',
              columns: [{ name: 'a', kind: 'string' }],
              generated: false,
              keys: new Set(),
              mods: 0,
            };
            const stream = pg
              ? `CREATE CHANGE STREAM changes FOR ALL WITH (value_capture_type = '${capture}')`
              : `CREATE CHANGE STREAM changes FOR ALL OPTIONS (value_capture_type = '${capture}')`;
            const test = await createTestDatabase(spanner, dialect, [createStatement(dialect, base), stream]);
            const dataset = `drift_${++datasets}`;
            const p = await pipeline(test.database, dialect, dataset);
            try {
              await p.app.scheduler.tick();
              const tables = [base];
              let last = 0n;
              // The pipeline reads along while the schema changes and rows are written.
              const stop = p.readAlong();
              try {
                for (const [i, op] of ops.entries()) {
                  const at = await apply(test.database, dialect, tables, op, i * 7);
                  if (at > last) last = at;
                }
              } finally {
                await stop();
              }
              if (last > 0n) await p.catchUp(last);
              await compare(test.database, dataset, tables);
            } finally {
              await p.app.close();
              await test.close();
            }
          },
        ),
        { numRuns: Number(process.env.DRIFT_RUNS ?? 4), endOnFailure: true },
      );
    }, 240_000);
  },
);
