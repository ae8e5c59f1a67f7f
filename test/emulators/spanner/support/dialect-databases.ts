/**
 * One Spanner emulator and a database per dialect for a test file, created before its tests and closed after
 * them, so that each file states only its schema.
 */
import type { Database } from '@google-cloud/spanner';
import { createTestDatabase, type TestDatabase } from '../../../../local/emulators/spanner/client';
import {
  type RunningSpannerEmulator,
  type StartOptions,
  startSpannerEmulator,
} from '../../../../local/emulators/spanner/server';
import type { Dialect } from '../../../../shared/domain/change-record';

/** The running emulator and its databases (read them inside tests, after `beforeAll` ran). */
export interface DialectDatabases {
  readonly emu: RunningSpannerEmulator;
  /** The GoogleSQL database. */
  readonly g: TestDatabase;
  /** The PostgreSQL database. */
  readonly pg: TestDatabase;
  /** The database of `dialect`. */
  db(dialect: Dialect): TestDatabase;
}

/**
 * Registers `beforeAll` / `afterAll` hooks that start an emulator (no churn unless `options` ask for it) and
 * create one database per dialect with its DDL. Setup gets 60 s: on a loaded machine it outlasts a test's
 * default timeout.
 */
export function dialectDatabases(
  ddl: Record<Dialect, string[]>,
  options: StartOptions = {},
): DialectDatabases {
  let emu: RunningSpannerEmulator | undefined;
  const dbs: Partial<Record<Dialect, TestDatabase>> = {};
  const need = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`${what} is not ready: read it inside a test`);
    return v;
  };
  beforeAll(async () => {
    emu = await startSpannerEmulator({ port: 0, churnMs: 0, ...options });
    for (const d of ['GOOGLE_STANDARD_SQL', 'POSTGRESQL'] as const)
      dbs[d] = await createTestDatabase(emu, d, ddl[d]);
  }, 60_000);
  afterAll(async () => {
    for (const db of Object.values(dbs)) await db?.close();
    await emu?.stop();
  });
  const db = (d: Dialect) => need(dbs[d], `the ${d} database`);
  return {
    get emu() {
      return need(emu, 'the emulator');
    },
    get g() {
      return db('GOOGLE_STANDARD_SQL');
    },
    get pg() {
      return db('POSTGRESQL');
    },
    db,
  };
}

/** A name as `dialect` spells it: PostgreSQL folds unquoted names to lower case. */
export function dialectName(dialect: Dialect, name: string): string {
  return dialect === 'POSTGRESQL' ? name.toLowerCase() : name;
}

/** Applies DDL statements and waits for the operation. */
export async function applyDdl(db: Database, statements: string[]): Promise<void> {
  const [op] = await db.updateSchema(statements);
  await op.promise();
}
