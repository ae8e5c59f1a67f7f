/**
 * `npm run emulator -- spanner --port 9010 [--admin-port 9011] [--partitions 3]
 *  [--database projects/p/instances/i/databases/d --dialect postgresql]`
 */
import type { CliOptions, EmulatorCli } from '../cli';
import { startSpannerEmulator } from './server';

function num(v: string | boolean | undefined, fallback: number): number {
  return typeof v === 'string' ? Number(v) : fallback;
}

/** The Spanner emulator's CLI entry. */
export const cli: EmulatorCli = {
  async start(options: CliOptions) {
    const emu = await startSpannerEmulator({
      port: num(options.port, 0),
      adminPort: num(options.adminPort, 0),
      partitions: num(options.partitions, 3),
    });
    if (typeof options.database === 'string') {
      const dialect =
        String(options.dialect ?? '').toLowerCase() === 'postgresql' ? 'POSTGRESQL' : 'GOOGLE_STANDARD_SQL';
      emu.admin.createDatabase(options.database, dialect);
    }
    return { addresses: { grpc: emu.address, admin: emu.adminUrl }, stop: emu.stop };
  },
};
