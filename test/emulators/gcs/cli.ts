/**
 * `npm run emulator -- gcs [--port 9199] [--admin-port 9200] [--bucket name] [--min-write-interval-ms 1000]`.
 */
import type { EmulatorCli } from '../cli';
import { startGcsEmulator } from './emulator';

function num(value: string | boolean | undefined, fallback: number): number {
  return typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : fallback;
}

/** Entry point used by `test/emulators/cli.ts`. */
export const cli: EmulatorCli = {
  async start(options) {
    const emulator = await startGcsEmulator({
      port: num(options['port'], 0),
      adminPort: num(options['adminPort'], 0),
      buckets: typeof options['bucket'] === 'string' ? options['bucket'].split(',') : [],
      minWriteIntervalMs: num(options['minWriteIntervalMs'], 0),
    });
    return {
      addresses: { http: emulator.url, admin: emulator.adminUrl ?? '' },
      stop: () => emulator.stop(),
    };
  },
};
