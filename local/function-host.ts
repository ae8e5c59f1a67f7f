/**
 * Runs one function in its own process, as the platform does: loads the function's module (which
 * registers it with the functions framework) and serves it through the framework's own server, bound to
 * loopback only. Usage: `node --import tsx local/function-host.ts <scheduler|reader|backfill|writer> <port>`.
 */
import { getTestServer } from '@google-cloud/functions-framework/testing';

const FUNCTIONS = ['scheduler', 'reader', 'backfill', 'writer'] as const;

function main(argv: string[]): void {
  const [target, portText] = argv;
  if (!FUNCTIONS.includes(target as (typeof FUNCTIONS)[number]) || !/^\d+$/.test(portText ?? '')) {
    throw new Error('usage: function-host <scheduler|reader|backfill|writer> <port>');
  }
  require(`../functions/${target}`);
  const server = getTestServer(target as string);
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
