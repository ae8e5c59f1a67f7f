/**
 * `npm start`: the whole pipeline on this machine, no Google account. Prints one line
 * `sluice local ready {json}` once the pipeline runs (see docs/local.md), then the live view; Ctrl-C (or
 * `--duration <s>`) stops the workload, waits for catch-up, compares BigQuery with Spanner, prints the
 * verdict and exits 0 only when they are equal. A second Ctrl-C quits at once (exit 130); either way no
 * function process is left behind (ADR-2001).
 */
process.env.METADATA_SERVER_DETECTION ??= 'none';

import { PORT_FLAGS, parseStartOptions, type StartOptions, USAGE, UsageError } from './cli-options';
import { killAllFunctionProcesses } from './function-process';
import { keptPortsFile } from './kept-ports';
import { readControlKeys } from './keys';
import { Screen } from './live-view';
import { defaultLogFile, LogFile, shortLogLine } from './log-lines';
import { PortInUseError } from './ports';
import { runLocal } from './run';
import { type LocalStack, startLocalStack } from './stack';
import { readyLine } from './stack-config';

/** Exit codes (docs/local.md). */
export const EXIT = { equal: 0, differs: 1, usage: 2, startFailed: 3, quit: 130 } as const;

/**
 * Without a terminal (input piped), `npm` forwards a SIGINT it got to its child, which may have got the
 * same SIGINT already: two signals for one interrupt, a few milliseconds apart. A repeat inside this gap
 * is that copy, not a second Ctrl-C. In a terminal, Ctrl-C is read as a keypress (see keys.ts).
 */
const SAME_KEYPRESS_MS = 500;

/** Ctrl-C handling: the first asks for a controlled stop, the next one quits at once. */
class Interrupts {
  private first = 0;
  private stopping = false;
  /** Whether control keys are read from the terminal (then a SIGINT is never a copy of a keypress). */
  private readonly keys: boolean;
  private resolve: () => void = () => {};
  /** Resolves at the first Ctrl-C (or SIGTERM) once the stack runs. */
  readonly requested = new Promise<void>((r) => {
    this.resolve = r;
  });
  /** Set once the stack is up: before that there is nothing to catch up, and any Ctrl-C quits. */
  running = false;

  constructor(private readonly screen: Screen) {
    // In a terminal Ctrl-C is a keypress (exactly one per press); SIGINT still comes from `kill -INT`.
    this.keys = readControlKeys(process.stdin, {
      interrupt: () => this.onSignal('SIGINT', true),
      quit: () => this.quit('Ctrl-\\'),
    });
    process.on('SIGINT', () => this.onSignal('SIGINT'));
    process.on('SIGTERM', () => this.onSignal('SIGTERM'));
    process.on('SIGHUP', () => this.quit('the terminal closed'));
  }

  private onSignal(signal: NodeJS.Signals, keypress = false): void {
    const now = Date.now();
    const copy = !keypress && !this.keys && signal === 'SIGINT';
    if (copy && this.first > 0 && now - this.first < SAME_KEYPRESS_MS) return;
    if (!this.running || this.stopping) this.quit(signal === 'SIGINT' ? 'Ctrl-C' : signal);
    this.first = now;
    this.stopping = true;
    this.screen.print('stopping: catch-up, then verification (Ctrl-C again to quit at once)');
    this.resolve();
  }

  /** Kills every function process and exits without a verdict. */
  quit(why: string): never {
    killAllFunctionProcesses();
    process.stderr.write(`\n${why}: quit at once, without verification\n`);
    process.exit(EXIT.quit);
  }
}

function startupFailure(err: unknown): number {
  if (err instanceof PortInUseError && err.keptIn) {
    const flag = PORT_FLAGS[err.role as keyof typeof PORT_FLAGS];
    process.stderr.write(
      `port ${err.port} (${err.role}, kept in ${err.keptIn} by the first start on this --data-dir) is already in use: ` +
        `stop what listens on it, ${flag ? `pass ${flag} <another port>, ` : ''}or use another --data-dir\n`,
    );
    return EXIT.usage;
  }
  if (err instanceof PortInUseError) {
    const flag = PORT_FLAGS[err.role as keyof typeof PORT_FLAGS] ?? err.role;
    process.stderr.write(
      `port ${err.port} (${flag}) is already in use: choose another port, or leave the flag out to use a free one\n`,
    );
    return EXIT.usage;
  }
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`the local stack failed to start: ${message}\n`);
  return EXIT.startFailed;
}

async function main(options: StartOptions): Promise<number> {
  const screen = new Screen(process.stdout);
  const interrupts = new Interrupts(screen);
  const logFile = new LogFile(options.logFile ?? defaultLogFile());
  let stack: LocalStack;
  try {
    stack = await startLocalStack({
      dialect: options.dialect,
      mode: options.mode,
      churnMs: options.churnMs,
      ports: options.ports,
      functionEnv: options.env,
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      onFunctionLog: (line) => {
        logFile.write(line);
        if (options.logs) screen.print(shortLogLine(line));
      },
    });
  } catch (err) {
    logFile.close();
    return startupFailure(err);
  }
  // The ready line waits for the pipeline: a change committed before its first tick would predate the
  // stream's start and never replicate, and the ready line is what a user's own writes wait for.
  const running = () => {
    screen.print(readyLine({ ...stack.ready, logFile: logFile.path }));
    if (stack.ready.console)
      screen.print(
        `console: ${stack.ready.console}  (npx sluice status --url ${stack.ready.functions.backfill})`,
      );
    if (options.dataDir)
      screen.print(
        `ports kept in ${keptPortsFile(options.dataDir, 'stack')}: a restart with --data-dir ${options.dataDir} listens on the same addresses`,
      );
    interrupts.running = true;
  };
  try {
    return await runLocal(stack, options, { screen, interrupted: interrupts.requested, running });
  } finally {
    await stack.stop();
    logFile.close();
  }
}

if (require.main === module) {
  let options: StartOptions | undefined;
  try {
    options = parseStartOptions(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(EXIT.usage);
  }
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(EXIT.equal);
  }
  main(options).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(EXIT.differs);
    },
  );
}
