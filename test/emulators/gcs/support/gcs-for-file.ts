/**
 * One Cloud Storage emulator for a test file, with an unmodified `@google-cloud/storage` client on it: started
 * before the file's tests and stopped after them, so that each file states only its buckets and client options.
 */
import type { Storage, StorageOptions } from '@google-cloud/storage';
import {
  type GcsEmulator,
  type GcsEmulatorOptions,
  startGcsEmulator,
} from '../../../../local/emulators/gcs/emulator';
import { startedForFile } from '../../common/for-file';

/** The running emulator and the client (read them inside tests). */
export interface GcsForFile {
  readonly emulator: GcsEmulator;
  readonly storage: Storage;
}

/** Starts the emulator with `options` for the file's tests, and a client with `client` options on it. */
export function gcsForFile(options: GcsEmulatorOptions, client?: StorageOptions): GcsForFile {
  const running = startedForFile(
    'the Cloud Storage emulator',
    async () => {
      const emulator = await startGcsEmulator({ port: 0, ...options });
      return { emulator, storage: emulator.storage(client) };
    },
    ({ emulator }) => emulator.stop(),
  );
  return {
    get emulator() {
      return running().emulator;
    },
    get storage() {
      return running().storage;
    },
  };
}
