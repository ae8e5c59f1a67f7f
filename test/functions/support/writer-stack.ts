/**
 * The writer function on the emulators, for the function tests: Spanner and Cloud Storage emulators, one
 * database per dialect with constraint-bearing and index-heavy tables, writers built by the composition root
 * and served by the functions framework on free ports, and small request helpers.
 */
import type { Server } from 'node:http';
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import type { Database } from '@google-cloud/spanner';
import { createWriterHandler } from '../../../functions/writer';
import { type GcsEmulator, startGcsEmulator } from '../../../local/emulators/gcs/emulator';
import { createTestDatabase, type TestDatabase } from '../../../local/emulators/spanner/client';
import { type RunningSpannerEmulator, startSpannerEmulator } from '../../../local/emulators/spanner/server';
import { createWriterFromEnv, type WriterInstance } from '../../../shared/wiring/writer';
import { ORDERS_AND_WIDE_DDL } from '../../emulators/spanner/support/constrained-tables';

/** A database dialect. */
export type Dialect = 'GOOGLE_STANDARD_SQL' | 'POSTGRESQL';

const DDL: Record<Dialect, string[]> = {
  GOOGLE_STANDARD_SQL: [
    'CREATE TABLE Customers (Id INT64 NOT NULL, Name STRING(10) NOT NULL, Score FLOAT64, Raw BYTES(MAX), At TIMESTAMP) PRIMARY KEY (Id)',
    ...ORDERS_AND_WIDE_DDL.GOOGLE_STANDARD_SQL,
  ],
  POSTGRESQL: [
    'CREATE TABLE customers (id bigint NOT NULL PRIMARY KEY, name varchar(10) NOT NULL, score float8, raw bytea, at timestamptz)',
    ...ORDERS_AND_WIDE_DDL.POSTGRESQL,
  ],
};

/** The bucket dead letters go to. */
export const BUCKET = 'writer-dead-letters';

/** An answer of the writer. */
export interface Answered {
  status: number;
  body: Record<string, unknown>;
}

/** The emulators, the databases and every writer served. */
export class WriterStack {
  emu!: RunningSpannerEmulator;
  gcs!: GcsEmulator;
  readonly dbs: Partial<Record<Dialect, TestDatabase>> = {};
  /** The writers' log lines (Cloud Logging JSON), newest last. */
  readonly lines: Array<Record<string, unknown>> = [];
  private readonly servers: Server[] = [];
  private readonly writers: WriterInstance[] = [];
  private served = 0;

  async start(): Promise<void> {
    this.emu = await startSpannerEmulator({ port: 0, changeStreams: false });
    this.gcs = await startGcsEmulator({ port: 0, buckets: [BUCKET] });
    process.env.SPANNER_EMULATOR_HOST = this.emu.address;
    for (const d of ['GOOGLE_STANDARD_SQL', 'POSTGRESQL'] as const)
      this.dbs[d] = await createTestDatabase(this.emu, d, DDL[d]);
  }

  /** Clears faults and restores the service's limits (after each test). */
  reset(): void {
    this.emu.admin.faults.clear();
    this.emu.admin.setLimits({ mutationsPerCommit: 80_000 });
  }

  async stop(): Promise<void> {
    for (const s of this.servers) await new Promise((r) => s.close(r));
    for (const w of this.writers) await w.close();
    for (const t of Object.values(this.dbs)) await t?.close();
    await this.gcs?.stop();
    await this.emu?.stop();
    delete process.env.SPANNER_EMULATOR_HOST;
  }

  database(d: Dialect): Database {
    return (this.dbs[d] as TestDatabase).database;
  }

  /** A writer function served by the functions framework on a free port; returns its base URL. */
  async serve(db: Database, env: Record<string, string> = {}): Promise<string> {
    const [, project, , instance, , database] = db.formattedName_.split('/') as string[];
    const built = await createWriterFromEnv(
      {
        SLUICE_PROJECT: project as string,
        SLUICE_SPANNER_INSTANCE: instance as string,
        SLUICE_SPANNER_DATABASE: database as string,
        SLUICE_WRITER_DEAD_LETTER_BUCKET: BUCKET,
        SLUICE_GCS_ENDPOINT: this.gcs.url,
        SLUICE_WRITER_BACKOFF_INITIAL_MS: '10',
        SLUICE_WRITER_BACKOFF_MAX_MS: '40',
        ...env,
      },
      (line) => this.lines.push(JSON.parse(line) as Record<string, unknown>),
    );
    this.writers.push(built);
    const name = `writer-test-${++this.served}`;
    http(
      name,
      createWriterHandler(async () => built),
    );
    const server = getTestServer(name);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    this.servers.push(server);
    const address = server.address();
    return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }
}

/** `POST <url>/mutations` with a JSON body. */
export async function post(url: string, body: unknown): Promise<Answered> {
  const res = await fetch(`${url}/mutations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** `[index, reason, status]` of each failed or unapplied mutation of an answer. */
export function reasons(b: Record<string, unknown>): Array<[number, string, string]> {
  return ((b.failures as Array<{ index: number; reason: string; status: string }>) ?? []).map((f) => [
    f.index,
    f.reason,
    f.status,
  ]);
}

/** Names in a dialect: the GoogleSQL spelling, lower-cased for PostgreSQL. */
export function names(d: Dialect) {
  const lower = (s: string) => (d === 'POSTGRESQL' ? s.toLowerCase() : s);
  const row = (values: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(values).map(([k, v]) => [lower(k), v]));
  const m = (op: string, table: string, values: Record<string, unknown>) => ({
    op,
    table: lower(table),
    row: row(values),
  });
  // Each dialect writes its own key range, as both databases share nothing but are easier to read apart.
  const id = (n: number) => String((d === 'POSTGRESQL' ? 10_000 : 0) + n);
  return { T: lower, row, m, id };
}
