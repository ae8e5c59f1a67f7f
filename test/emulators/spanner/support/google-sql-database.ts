/**
 * One Spanner emulator and one GoogleSQL database for a test file, created before its tests and closed after
 * them, so that each file states only its schema and the emulator options it needs.
 */
import { createTestDatabase, type TestDatabase } from '../../../../local/emulators/spanner/client';
import {
  type RunningSpannerEmulator,
  type StartOptions,
  startSpannerEmulator,
} from '../../../../local/emulators/spanner/server';

/** The running emulator and its database (read them inside tests, after `beforeAll` ran). */
export interface GoogleSqlDatabase {
  readonly emu: RunningSpannerEmulator;
  readonly db: TestDatabase;
}

/** Registers `beforeAll` / `afterAll` hooks that start an emulator with `options` and create the database. */
export function googleSqlDatabaseForFile(ddl: string[], options: StartOptions = {}): GoogleSqlDatabase {
  let emu: RunningSpannerEmulator | undefined;
  let db: TestDatabase | undefined;
  beforeAll(async () => {
    emu = await startSpannerEmulator({ port: 0, ...options });
    db = await createTestDatabase(emu, 'GOOGLE_STANDARD_SQL', ddl);
  });
  afterAll(async () => {
    await db?.close();
    await emu?.stop();
  });
  const ready = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`${what} is not ready: read it inside a test`);
    return v;
  };
  return {
    get emu() {
      return ready(emu, 'the emulator');
    },
    get db() {
      return ready(db, 'the database');
    },
  };
}
