/** `npm run emulator -- lineage [--port 9040] [--admin-port 9041] [--data-dir dir]`. */
import { type EmulatorCli, givenFlags, portAndAdminPort } from '../cli';
import { startLineageEmulator } from './emulator';

/** Entry point used by `local/emulators/cli.ts`. */
export const cli: EmulatorCli = {
  usage: 'usage: npm run emulator -- lineage [--port 9040] [--admin-port 9041] [--data-dir dir]',
  portFlags: { grpc: 'port', admin: 'adminPort' },
  async start(options) {
    const emulator = await startLineageEmulator({
      ...portAndAdminPort(options),
      ...givenFlags(options, 'dataDir'),
    });
    return {
      addresses: { grpc: emulator.address, admin: emulator.adminUrl ?? '' },
      stop: () => emulator.stop(),
    };
  },
};
