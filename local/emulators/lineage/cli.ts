/** `npm run emulator -- lineage [--port 9040] [--admin-port 9041] [--data-dir dir]`. */
import { type EmulatorCli, givenFlags, intFlag } from '../cli';
import { startLineageEmulator } from './emulator';

/** Entry point used by `local/emulators/cli.ts`. */
export const cli: EmulatorCli = {
  usage: 'usage: npm run emulator -- lineage [--port 9040] [--admin-port 9041] [--data-dir dir]',
  portFlags: { grpc: 'port', admin: 'adminPort' },
  async start(options) {
    const emulator = await startLineageEmulator({
      port: intFlag(options, 'port', 0),
      adminPort: intFlag(options, 'adminPort', 0),
      ...givenFlags(options, 'dataDir'),
    });
    return {
      addresses: { grpc: emulator.address, admin: emulator.adminUrl ?? '' },
      stop: () => emulator.stop(),
    };
  },
};
