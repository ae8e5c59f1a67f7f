/**
 * `npm run emulator -- bigquery --port <grpc> --rest-port <http> [--admin-port <p>] [--project <id>]
 * [--create-stream-quota <n>[/<window ms>]] [--data-dir dir]`.
 */
import type { CliOptions, EmulatorCli } from '../cli';
import { startBigQueryEmulator } from './emulator';
import { type CreateStreamQuota, parseCreateStreamQuota } from './stream-quota';

function port(value: string | boolean | undefined): number {
  return typeof value === 'string' ? Number(value) : 0;
}

/** The BigQuery emulator as the shared CLI starts it. */
export const cli: EmulatorCli = {
  usage:
    'usage: npm run emulator -- bigquery --port <grpc> --rest-port <http> [--admin-port <p>] [--project <id>] [--create-stream-quota <n>[/<window ms>]] [--data-dir dir]',
  portFlags: { grpc: 'port', rest: 'restPort', admin: 'adminPort' },
  async start(options: CliOptions) {
    const quota: CreateStreamQuota | undefined =
      typeof options.createStreamQuota === 'string'
        ? parseCreateStreamQuota(options.createStreamQuota)
        : undefined;
    const emulator = await startBigQueryEmulator({
      ...(quota ? { createStreamQuota: quota } : {}),
      grpcPort: port(options.port),
      restPort: port(options.restPort),
      adminPort: port(options.adminPort),
      ...(typeof options.project === 'string' ? { projectId: options.project } : {}),
      ...(typeof options.dataDir === 'string' ? { dataDir: options.dataDir } : {}),
    });
    return {
      addresses: {
        grpc: emulator.grpcAddress,
        rest: emulator.restUrl,
        ...(emulator.adminUrl ? { admin: emulator.adminUrl } : {}),
      },
      stop: () => emulator.stop(),
    };
  },
};
