/**
 * `npm run emulator -- tasks [--port 8123] [--admin-port 8124] [--queue projects/p/locations/l/queues/q]
 * [--tombstone-ms 3600000] [--min-dispatch-deadline-ms 15000] [--data-dir dir]
 * [--app-engine-url http://127.0.0.1:8080]`; `--queue` takes a comma-separated list.
 */
import { type EmulatorCli, givenFlags, intFlag, listFlag, portAndAdminPort } from '../cli';
import { startTasksEmulator } from './emulator';

/** Entry point used by `local/emulators/cli.ts`. */
export const cli: EmulatorCli = {
  usage:
    'usage: npm run emulator -- tasks [--port 8123] [--admin-port 8124] [--queue projects/p/locations/l/queues/q] [--tombstone-ms 3600000] [--min-dispatch-deadline-ms 15000] [--data-dir dir] [--app-engine-url http://127.0.0.1:8080]; --queue takes a comma-separated list',
  portFlags: { grpc: 'port', admin: 'adminPort' },
  async start(options) {
    const emulator = await startTasksEmulator({
      ...portAndAdminPort(options),
      queues: listFlag(options, 'queue'),
      tombstoneMs: intFlag(options, 'tombstoneMs', 3_600_000),
      minDispatchDeadlineMs: intFlag(options, 'minDispatchDeadlineMs', 15_000),
      ...givenFlags(options, 'dataDir', 'appEngineUrl'),
    });
    return {
      addresses: { grpc: emulator.address, admin: emulator.adminUrl ?? '' },
      stop: () => emulator.stop(),
    };
  },
};
