/**
 * `npm run emulator -- <name> [--flag value ...]` starts one emulator; `npm run emulators` starts every
 * emulator that exists, each on its own free port (`--data-dir <dir>` keeps every emulator's state in
 * `<dir>/<name>/` across restarts). Each emulator lives in `local/emulators/<name>/` and
 * exports `cli: EmulatorCli` from its `cli.ts`. Prints one line containing `ready` and serves until
 * SIGINT / SIGTERM.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Options parsed from `--kebab-case value` flags (`--flag` alone is `true`), keys in camelCase. */
export type CliOptions = Record<string, string | boolean>;

/** A running emulator as the CLI sees it. */
export interface RunningEmulator {
  /** Named addresses, e.g. `{grpc: '127.0.0.1:9010', admin: 'http://127.0.0.1:9011'}`. */
  addresses: Record<string, string>;
  stop(): Promise<void>;
}

/** What each emulator's `cli.ts` exports. */
export interface EmulatorCli {
  start(options: CliOptions): Promise<RunningEmulator>;
}

/** Parses `--a-b 1 --c` into `{aB: '1', c: true}`. */
export function parseFlags(argv: string[]): CliOptions {
  const out: CliOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--'))
      throw new Error(`unexpected argument ${JSON.stringify(arg)}; flags look like --port 9010`);
    const key = arg.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    const next = argv[i + 1];
    if (next === undefined || next.startsWith('--')) out[key] = true;
    else {
      out[key] = next;
      i++;
    }
  }
  return out;
}

/** A whole-number flag's value, or `fallback` when the flag is absent or not digits. */
export function intFlag(value: string | boolean | undefined, fallback: number): number {
  return typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : fallback;
}

/** A comma-separated flag's items (none when the flag is absent). */
export function listFlag(value: string | boolean | undefined): string[] {
  return typeof value === 'string' ? value.split(',') : [];
}

/**
 * Options of one emulator under `npm run emulators`: only `--data-dir`, each emulator in its own
 * subdirectory (`<dir>/spanner`, `<dir>/gcs`, …); other flags belong to `npm run emulator -- <name>`.
 */
export function allOptions(options: CliOptions, name: string): CliOptions {
  const unknown = Object.keys(options).filter((k) => k !== 'dataDir');
  if (unknown.length)
    throw new Error(
      `npm run emulators takes only --data-dir; use npm run emulator -- <name> for ${unknown.map((k) => `--${k}`).join(', ')}`,
    );
  const dir = options.dataDir;
  if (dir === true) throw new Error('--data-dir needs a directory');
  return typeof dir === 'string' ? { dataDir: join(dir, name) } : {};
}

function available(): string[] {
  return readdirSync(__dirname, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(__dirname, d.name, 'cli.ts')))
    .map((d) => d.name)
    .sort();
}

async function load(name: string): Promise<EmulatorCli> {
  const mod = (await import(join(__dirname, name, 'cli'))) as { cli?: EmulatorCli };
  if (!mod.cli) throw new Error(`emulator ${name} does not export cli`);
  return mod.cli;
}

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  const names = available();
  if (!name || (name !== 'all' && !names.includes(name))) {
    throw new Error(
      `usage: npm run emulator -- <${names.join('|')}> [--port <p>] ...  (or npm run emulators)`,
    );
  }
  const options = parseFlags(rest);
  const running: Array<[string, RunningEmulator]> = [];
  for (const n of name === 'all' ? names : [name]) {
    running.push([n, await (await load(n)).start(name === 'all' ? allOptions(options, n) : options)]);
  }
  const addresses = Object.fromEntries(running.map(([n, r]) => [n, r.addresses]));
  console.log(`${name === 'all' ? 'emulators' : `${name} emulator`} ready ${JSON.stringify(addresses)}`);
  const stop = async () => {
    await Promise.all(running.map(([, r]) => r.stop()));
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(2);
  });
}
