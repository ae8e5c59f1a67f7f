/**
 * `npm run emulator -- spanner --port 9010 [--admin-port 9011] [--partitions N | --partition-bytes 4194304]
 *  [--initial-partitions 2] [--churn-ms 30000] [--no-change-streams] [--no-retention-check]
 *  [--database projects/p/instances/i/databases/d --dialect postgresql] [--data-dir dir]`
 */
import {
  type CliOptions,
  choiceFlag,
  type EmulatorCli,
  givenFlags,
  intFlag,
  portAndAdminPort,
  stringFlag,
  switchFlag,
} from '../cli';
import { DEFAULT_CHURN_MS } from './change-stream-wiring';
import { startSpannerEmulator } from './server';

/** The Spanner emulator's CLI entry. */
export const cli: EmulatorCli = {
  usage:
    'usage: npm run emulator -- spanner --port 9010 [--admin-port 9011] [--partitions N | --partition-bytes 4194304] [--initial-partitions 2] [--churn-ms 30000] [--no-change-streams] [--no-retention-check] [--database projects/p/instances/i/databases/d --dialect postgresql] [--data-dir dir]',
  portFlags: { grpc: 'port', admin: 'adminPort' },
  async start(options: CliOptions) {
    const database = stringFlag(options, 'database');
    const dialect = choiceFlag(
      options,
      'dialect',
      ['googlesql', 'google_standard_sql', 'postgresql'],
      'googlesql',
    );
    if (options.dialect !== undefined && database === undefined)
      throw new Error('--dialect is the dialect of the --database it creates: give --database too');
    const emu = await startSpannerEmulator({
      ...portAndAdminPort(options),
      ...(options.partitions === undefined ? {} : { partitions: intFlag(options, 'partitions', 0) }),
      ...(options.partitionBytes === undefined
        ? {}
        : { partitionBytes: intFlag(options, 'partitionBytes', 0) }),
      initialPartitions: Math.max(1, intFlag(options, 'initialPartitions', 2)),
      churnMs: intFlag(options, 'churnMs', DEFAULT_CHURN_MS),
      ...(switchFlag(options, 'noChangeStreams') ? { changeStreams: false as const } : {}),
      ...(switchFlag(options, 'noRetentionCheck') ? { retentionCheck: false } : {}),
      ...givenFlags(options, 'dataDir'),
    });
    if (database !== undefined && !emu.admin.hasDatabase(database))
      emu.admin.createDatabase(database, dialect === 'postgresql' ? 'POSTGRESQL' : 'GOOGLE_STANDARD_SQL');
    return { addresses: { grpc: emu.address, admin: emu.adminUrl }, stop: emu.stop };
  },
};
