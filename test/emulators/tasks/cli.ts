/**
 * `npm run emulator -- tasks [--port 8123] [--admin-port 8124] [--queue projects/p/locations/l/queues/q]
 * [--tombstone-ms 3600000]`; `--queue` takes a comma-separated list.
 */
import type { EmulatorCli } from '../cli';
import { startTasksEmulator } from './emulator';

function num(value: string | boolean | undefined, fallback: number): number {
  return typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : fallback;
}

/** Entry point used by `test/emulators/cli.ts`. */
export const cli: EmulatorCli = {
  async start(options) {
    const emulator = await startTasksEmulator({
      port: num(options['port'], 0),
      adminPort: num(options['adminPort'], 0),
      queues: typeof options['queue'] === 'string' ? options['queue'].split(',') : [],
      tombstoneMs: num(options['tombstoneMs'], 3_600_000),
    });
    return {
      addresses: { grpc: emulator.address, admin: emulator.adminUrl ?? '' },
      stop: () => emulator.stop(),
    };
  },
};
