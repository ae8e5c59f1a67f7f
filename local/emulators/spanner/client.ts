/**
 * Test helper: an official `Spanner` client wired to a running emulator, and a fresh instance + database
 * in either dialect.
 */
import { randomBytes } from 'node:crypto';
import { type Database, type Instance, Spanner } from '@google-cloud/spanner';
import * as grpc from '@grpc/grpc-js';
import type { RunningSpannerEmulator } from './server';

/** A ready database and the client behind it. */
export interface TestDatabase {
  spanner: Spanner;
  instance: Instance;
  database: Database;
  /** Full resource name. */
  name: string;
  close(): Promise<void>;
}

/** A new client on the emulator (no credentials, insecure channel). */
export function emulatorClient(emulator: RunningSpannerEmulator, projectId = 'test-project'): Spanner {
  process.env.METADATA_SERVER_DETECTION ??= 'none';
  return new Spanner({
    projectId,
    servicePath: '127.0.0.1',
    port: emulator.port,
    sslCreds: grpc.credentials.createInsecure(),
  });
}

/** Creates an instance and a database (with optional DDL) through the client's own admin calls. */
export async function createTestDatabase(
  emulator: RunningSpannerEmulator,
  dialect: 'GOOGLE_STANDARD_SQL' | 'POSTGRESQL' = 'GOOGLE_STANDARD_SQL',
  ddl: string[] = [],
): Promise<TestDatabase> {
  const spanner = emulatorClient(emulator);
  const suffix = randomBytes(4).toString('hex');
  const [instance, op] = await spanner.createInstance(`i-${suffix}`, { config: 'emulator-config', nodes: 1 });
  await op.promise();
  const [database, dbOp] = await instance.createDatabase(`d-${suffix}`, { databaseDialect: dialect });
  await dbOp.promise();
  if (ddl.length) {
    const [ddlOp] = await database.updateSchema(ddl);
    await ddlOp.promise();
  }
  return {
    spanner,
    instance,
    database,
    name: database.formattedName_,
    close: async () => {
      await database.close();
      spanner.close();
    },
  };
}
