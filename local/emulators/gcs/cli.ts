/**
 * `npm run emulator -- gcs [--port 9199] [--admin-port 9200] [--bucket name] [--min-write-interval-ms 1000]
 *  [--data-dir dir]`.
 */
import { type EmulatorCli, givenFlags, intFlag, listFlag, portAndAdminPort } from '../cli';
import { startGcsEmulator } from './emulator';

/** Entry point used by `local/emulators/cli.ts`. */
export const cli: EmulatorCli = {
  usage:
    'usage: npm run emulator -- gcs [--port 9199] [--admin-port 9200] [--bucket name] [--min-write-interval-ms 1000] [--data-dir dir]',
  portFlags: { http: 'port', admin: 'adminPort' },
  async start(options) {
    const emulator = await startGcsEmulator({
      ...portAndAdminPort(options),
      buckets: listFlag(options, 'bucket'),
      minWriteIntervalMs: intFlag(options, 'minWriteIntervalMs', 0),
      ...givenFlags(options, 'dataDir'),
    });
    return {
      addresses: { http: emulator.url, admin: emulator.adminUrl ?? '' },
      stop: () => emulator.stop(),
    };
  },
};
