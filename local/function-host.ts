/**
 * Runs one function in its own process, as the platform does: loads the function's module (which
 * registers it with the functions framework) and serves it through the framework's own server, bound to
 * loopback only. Usage: `node --import tsx local/function-host.ts <name> <port> [--lifeline]`.
 *
 * With `--lifeline` the process exits as soon as its standard input closes: the parent holds the other end
 * of that pipe, so however the parent ends (a thrown error, SIGKILL, a closed terminal) the kernel closes
 * it and no function process outlives the stack that started it (ADR-2001).
 */
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { type ExpressApp, installOn } from '../shared/http/edge';

/**
 * Each function's module, loaded only for the function this process serves (loading it registers it with
 * the framework). Written out rather than computed so a bundler sees all four (local/function-bundle.ts).
 */
const MODULES = {
  scheduler: () => require('../functions/scheduler'),
  reader: () => require('../functions/reader'),
  backfill: () => require('../functions/backfill'),
  writer: () => require('../functions/writer'),
} as const;
const FUNCTIONS = Object.keys(MODULES) as Array<keyof typeof MODULES>;

/** Prints the one line the parent reads when the server cannot start (e.g. the port is taken). */
function failed(target: string, port: number, err: NodeJS.ErrnoException): never {
  const reason = err.code === 'EADDRINUSE' ? `port ${port} is already in use` : err.message;
  console.log(`function-host failed ${JSON.stringify({ function: target, port, code: err.code, reason })}`);
  process.exit(1);
}

function main(argv: string[]): void {
  const [target, portText, ...flags] = argv;
  if (!FUNCTIONS.includes(target as keyof typeof MODULES) || !/^\d+$/.test(portText ?? '')) {
    throw new Error('usage: function-host <scheduler|reader|backfill|writer> <port> [--lifeline]');
  }
  if (flags.includes('--lifeline')) {
    process.stdin.on('end', () => process.exit(0));
    process.stdin.on('error', () => process.exit(0));
    process.stdin.resume();
  }
  // As the platform names the function it serves (the body guard picks its limit by it).
  process.env.FUNCTION_TARGET = target;
  MODULES[target as keyof typeof MODULES]();
  const server = getTestServer(target as string);
  server.once('error', (err) => failed(target as string, Number(portText), err));
  // The framework's Express app answers requests: JSON errors from the first request on (ADR-1508).
  const app = server.listeners('request')[0];
  if (app) installOn(app as unknown as ExpressApp);
  server.listen(Number(portText), '127.0.0.1', () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : Number(portText);
    console.log(`function-host listening ${JSON.stringify({ function: target, port })}`);
  });
  const stop = () => server.close(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main(process.argv.slice(2));
