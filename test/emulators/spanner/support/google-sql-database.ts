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
import { startedForFile } from '../../common/for-file';

/** The running emulator and its database (read them inside tests). */
export interface GoogleSqlDatabase {
  readonly emu: RunningSpannerEmulator;
  readonly db: TestDatabase;
}

/** Starts an emulator with `options` for the file's tests and creates the database with `ddl` on it. */
export function googleSqlDatabaseForFile(ddl: string[], options: StartOptions = {}): GoogleSqlDatabase {
  const running = startedForFile(
    'the Spanner emulator',
    async () => {
      const emu = await startSpannerEmulator({ port: 0, ...options });
      try {
        return { emu, db: await createTestDatabase(emu, 'GOOGLE_STANDARD_SQL', ddl) };
      } catch (err) {
        await emu.stop();
        throw err;
      }
    },
    async ({ emu, db }) => {
      await db.close();
      await emu.stop();
    },
  );
  return {
    get emu() {
      return running().emu;
    },
    get db() {
      return running().db;
    },
  };
}
