/**
 * `npm run emulator -- bigquery --port <grpc> --rest-port <http> [--admin-port <p>] [--project <id>]
 * [--create-stream-quota <n>[/<window ms>]] [--data-dir dir]`.
 */
import { type CliOptions, type EmulatorCli, givenFlags, intFlag, stringFlag } from '../cli';
import { startBigQueryEmulator } from './emulator';
import { type CreateStreamQuota, parseCreateStreamQuota } from './stream-quota';

/** The BigQuery emulator as the shared CLI starts it. */
export const cli: EmulatorCli = {
  usage:
    'usage: npm run emulator -- bigquery --port <grpc> --rest-port <http> [--admin-port <p>] [--project <id>] [--create-stream-quota <n>[/<window ms>]] [--data-dir dir]',
  portFlags: { grpc: 'port', rest: 'restPort', admin: 'adminPort' },
  async start(options: CliOptions) {
    const quotaFlag = stringFlag(options, 'createStreamQuota');
    const project = stringFlag(options, 'project');
    const quota: CreateStreamQuota | undefined =
      quotaFlag === undefined ? undefined : parseCreateStreamQuota(quotaFlag);
    const emulator = await startBigQueryEmulator({
      ...(quota ? { createStreamQuota: quota } : {}),
      grpcPort: intFlag(options, 'port', 0),
      restPort: intFlag(options, 'restPort', 0),
      adminPort: intFlag(options, 'adminPort', 0),
      ...(project === undefined ? {} : { projectId: project }),
      ...givenFlags(options, 'dataDir'),
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
