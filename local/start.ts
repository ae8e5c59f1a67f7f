/**
 * `npm start`: the whole pipeline on this machine, no Google account. Prints one line
 * `sluice local ready {json}` when everything is up (see docs/local.md), then the live view; Ctrl-C (or
 * `--duration <s>`) stops the workload, waits for catch-up, compares BigQuery with Spanner, prints the
 * verdict and exits 0 only when they are equal.
 */
process.env.METADATA_SERVER_DETECTION ??= 'none';

import { parseStartOptions, type StartOptions } from './cli-options';
import { runLocal } from './run';
import { startLocalStack } from './stack';
import { readyLine } from './stack-config';

async function main(options: StartOptions): Promise<number> {
  let interrupt: () => void = () => {};
  const interrupted = new Promise<void>((resolve) => {
    interrupt = resolve;
  });
  let interrupts = 0;
  const onSignal = () => {
    interrupts++;
    if (interrupts > 1) process.exit(130);
    process.stdout.write('\nstopping: catch-up and verification (Ctrl-C again to quit at once)\n');
    interrupt();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const stack = await startLocalStack({
    dialect: options.dialect,
    mode: options.mode,
    churnMs: options.churnMs,
    ports: options.ports,
  });
  try {
    process.stdout.write(`${readyLine(stack.ready)}\n`);
    return await runLocal(stack, options, { out: process.stdout, interrupted });
  } finally {
    await stack.stop();
  }
}

if (require.main === module) {
  let options: StartOptions;
  try {
    options = parseStartOptions(process.argv.slice(2));
  } catch (err) {
    console.error((err as Error).message);
    process.exit(2);
  }
  main(options).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      process.exit(1);
    },
  );
}
