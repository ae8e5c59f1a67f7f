/**
 * `npm run emulator -- spanner --port 9010 [--admin-port 9011] [--partitions N | --partition-bytes 4194304]
 *  [--initial-partitions 2] [--churn-ms 30000] [--no-change-streams] [--no-retention-check]
 *  [--database projects/p/instances/i/databases/d --dialect postgresql] [--data-dir dir]`
 */
import type { CliOptions, EmulatorCli } from '../cli';
import { DEFAULT_CHURN_MS } from './change-stream-wiring';
import { startSpannerEmulator } from './server';

function num(v: string | boolean | undefined, fallback: number): number {
  if (typeof v !== 'string') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`expected a non-negative integer, got ${JSON.stringify(v)}`);
  return n;
}

/** The Spanner emulator's CLI entry. */
export const cli: EmulatorCli = {
  usage:
    'usage: npm run emulator -- spanner --port 9010 [--admin-port 9011] [--partitions N | --partition-bytes 4194304] [--initial-partitions 2] [--churn-ms 30000] [--no-change-streams] [--no-retention-check] [--database projects/p/instances/i/databases/d --dialect postgresql] [--data-dir dir]',
  portFlags: { grpc: 'port', admin: 'adminPort' },
  async start(options: CliOptions) {
    const emu = await startSpannerEmulator({
      port: num(options.port, 0),
      adminPort: num(options.adminPort, 0),
      ...(options.partitions === undefined ? {} : { partitions: num(options.partitions, 0) }),
      ...(options.partitionBytes === undefined ? {} : { partitionBytes: num(options.partitionBytes, 0) }),
      initialPartitions: Math.max(1, num(options.initialPartitions, 2)),
      churnMs: num(options.churnMs, DEFAULT_CHURN_MS),
      ...(options.noChangeStreams === true ? { changeStreams: false as const } : {}),
      ...(options.noRetentionCheck === true ? { retentionCheck: false } : {}),
      ...(typeof options.dataDir === 'string' ? { dataDir: options.dataDir } : {}),
    });
    if (typeof options.database === 'string' && !emu.admin.hasDatabase(options.database)) {
      const dialect =
        String(options.dialect ?? '').toLowerCase() === 'postgresql' ? 'POSTGRESQL' : 'GOOGLE_STANDARD_SQL';
      emu.admin.createDatabase(options.database, dialect);
    }
    return { addresses: { grpc: emu.address, admin: emu.adminUrl }, stop: emu.stop };
  },
};
