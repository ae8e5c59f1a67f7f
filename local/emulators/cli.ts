/**
 * `npm run emulator -- <name> [--flag value ...]` starts one emulator; `npm run emulators` starts every
 * emulator that exists, each on its own free port, or on consecutive ports from `--ports-from <n>`
 * (`--data-dir <dir>` keeps every emulator's state in `<dir>/<name>/` across restarts, and the ports of the
 * first start in `<dir>/emulators-ports.json`, asked for again on every restart). Each emulator lives in
 * `local/emulators/<name>/` and exports `cli: EmulatorCli` from its `cli.ts`. Prints one line containing
 * `ready` and serves until SIGINT / SIGTERM; `--help` prints the usage and exits 0.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  consecutivePorts,
  keepPorts,
  keptPortsFile,
  type PortMap,
  portOf,
  readKeptPorts,
} from '../kept-ports';
import { assertPortsFree, PortInUseError } from '../ports';

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
  /** `npm run emulator -- <name> --help`: every flag. */
  usage: string;
  /** The port flag (camelCase) behind each of its addresses, e.g. `{grpc: 'port', admin: 'adminPort'}`. */
  portFlags: Record<string, string>;
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

/** `dataDir` as the user typed it: `--data-dir`. */
export function flagName(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** A flag that takes a value (`--data-dir dir`): its value, or undefined when absent; alone it is an error. */
export function stringFlag(options: CliOptions, key: string): string | undefined {
  const value = options[key];
  if (value === undefined || typeof value === 'string') return value;
  throw new Error(`${flagName(key)} needs a value`);
}

/** A flag that takes no value (`--no-change-streams`): whether it was given; a value after it is an error. */
export function switchFlag(options: CliOptions, key: string): boolean {
  const value = options[key];
  if (typeof value === 'string')
    throw new Error(`${flagName(key)} takes no value, got ${JSON.stringify(value)}`);
  return value === true;
}

/** A whole-number flag (`--port 9010`), or `fallback` when absent; any other value is an error naming it. */
export function intFlag(options: CliOptions, key: string, fallback: number): number {
  const value = stringFlag(options, key);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new Error(`${flagName(key)} takes a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

/** `--port` and `--admin-port`, which most emulators take: 0 (a free port) for one that is absent. */
export function portAndAdminPort(options: CliOptions): { port: number; adminPort: number } {
  return { port: intFlag(options, 'port', 0), adminPort: intFlag(options, 'adminPort', 0) };
}

/** A comma-separated flag's items (none when the flag is absent). */
export function listFlag(options: CliOptions, key: string): string[] {
  return stringFlag(options, key)?.split(',') ?? [];
}

/** One of `choices` (any case), or `fallback` when absent; another value is an error listing the choices. */
export function choiceFlag<T extends string>(
  options: CliOptions,
  key: string,
  choices: readonly T[],
  fallback: T,
): T {
  const value = stringFlag(options, key);
  if (value === undefined) return fallback;
  const found = choices.find((c) => c.toLowerCase() === value.toLowerCase());
  if (found === undefined)
    throw new Error(`${flagName(key)} takes one of ${choices.join(', ')}, got ${JSON.stringify(value)}`);
  return found;
}

/** The value flags among `keys` that were given, by key: spread into an emulator's options. */
export function givenFlags<K extends string>(options: CliOptions, ...keys: K[]): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const key of keys) {
    const value = stringFlag(options, key);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * Refuses a flag the emulator's usage does not name (a typo such as `--prot` would otherwise be ignored and
 * the emulator start on a port nobody asked for). The usage is the list of flags, so the two cannot drift.
 */
export function assertKnownFlags(name: string, cli: EmulatorCli, options: CliOptions): void {
  const known = new Set([...cli.usage.matchAll(/--([a-z][a-z-]*)/g)].map((m) => `--${m[1]}`));
  const unknown = Object.keys(options)
    .map(flagName)
    .filter((f) => !known.has(f));
  if (unknown.length)
    throw new Error(
      `the ${name} emulator takes no ${unknown.join(', ')}; it takes ${[...known].filter((f) => f !== '--help').join(', ')}`,
    );
}

/**
 * Options of one emulator under `npm run emulators`: only `--data-dir`, each emulator in its own
 * subdirectory (`<dir>/spanner`, `<dir>/gcs`, …), and `--ports-from`, turned into port flags by the
 * caller; other flags belong to `npm run emulator -- <name>`.
 */
export function allOptions(options: CliOptions, name: string): CliOptions {
  const unknown = Object.keys(options).filter((k) => k !== 'dataDir' && k !== 'portsFrom');
  if (unknown.length)
    throw new Error(
      `npm run emulators takes only --data-dir and --ports-from; use npm run emulator -- <name> for ${unknown.map((k) => `--${k}`).join(', ')}`,
    );
  const dir = options.dataDir;
  if (dir === true) throw new Error('--data-dir needs a directory');
  return typeof dir === 'string' ? { dataDir: join(dir, name) } : {};
}

/** Usage of `npm run emulator(s)`. */
function usage(names: string[]): string {
  return [
    `usage: npm run emulator -- <${names.join('|')}> [flags]   one emulator (npm run emulator -- <name> --help)`,
    '       npm run emulators -- [--ports-from <n>] [--data-dir <dir>]',
    '  --ports-from <n>  every emulator on consecutive ports from n, in the order of the ready line',
    "  --data-dir <dir>  keep every emulator's state in <dir>/<name>/ and the ports of the first start in",
    '                    <dir>/emulators-ports.json: a restart on the same directory gets the same addresses',
    '  --help            this text',
  ].join('\n');
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

/** The flags a start asks for: each emulator's port flags (role `<name>.<flag>`) set to a port. */
function portOptions(clis: Array<[string, EmulatorCli]>, ports: PortMap | undefined) {
  const out: Record<string, CliOptions> = {};
  for (const [name, cli] of clis) {
    out[name] = {};
    for (const flag of Object.values(cli.portFlags)) {
      const port = ports?.[`${name}.${flag}`];
      if (port) out[name][flag] = String(port);
    }
  }
  return out;
}

/** The ports the emulators listen on, by role `<name>.<flag>`. */
function listening(clis: Array<[string, EmulatorCli]>, running: Map<string, RunningEmulator>): PortMap {
  const out: PortMap = {};
  for (const [name, cli] of clis) {
    const addresses = running.get(name)?.addresses ?? {};
    for (const [key, flag] of Object.entries(cli.portFlags)) {
      if (addresses[key]) out[`${name}.${flag}`] = portOf(addresses[key]);
    }
  }
  return out;
}

/**
 * The ports of this start: those the data directory kept, else consecutive ones from `--ports-from`, else
 * none (free ones). A `--ports-from` that disagrees with the kept ports is refused rather than ignored.
 */
function plannedPorts(clis: Array<[string, EmulatorCli]>, options: CliOptions, file: string | undefined) {
  const roles = clis.flatMap(([name, cli]) => Object.values(cli.portFlags).map((f) => `${name}.${f}`));
  const kept = file ? readKeptPorts(file) : undefined;
  const from = options.portsFrom === undefined ? undefined : intFlag(options, 'portsFrom', 0);
  const asked = from === undefined ? undefined : consecutivePorts(from, roles);
  if (kept && asked && roles.some((r) => kept[r] !== asked[r]))
    throw new Error(
      `--ports-from ${from} differs from the ports ${file} keeps (${roles.map((r) => kept[r]).join(', ')}): leave --ports-from out, or use another --data-dir`,
    );
  return { ports: kept ?? asked, kept: kept !== undefined };
}

async function startAll(name: string, names: string[], options: CliOptions) {
  const all = name === 'all';
  const clis: Array<[string, EmulatorCli]> = [];
  for (const n of all ? names : [name]) clis.push([n, await load(n)]);
  const dir = typeof options.dataDir === 'string' ? options.dataDir : undefined;
  const file = dir ? keptPortsFile(dir, 'emulators') : undefined;
  if (!all && options.portsFrom !== undefined)
    throw new Error('--ports-from belongs to npm run emulators; give one emulator --port and --admin-port');
  const { ports, kept } = plannedPorts(clis, options, file);
  await assertPortsFree(ports ?? {}).catch((err: unknown) => {
    if (!(err instanceof PortInUseError)) throw err;
    const why = kept ? `kept in ${file}` : `from --ports-from ${options.portsFrom}`;
    const fix = kept
      ? 'stop what listens on it, or start with another --data-dir'
      : 'choose another --ports-from';
    throw new Error(`port ${err.port} (${err.role}, ${why}) is already in use: ${fix}`);
  });
  const flags = portOptions(clis, ports);
  const running = new Map<string, RunningEmulator>();
  try {
    for (const [n, cli] of clis) {
      const own = all ? allOptions(options, n) : (({ portsFrom: _, ...rest }) => rest)(options);
      if (!all) assertKnownFlags(n, cli, own);
      running.set(n, await cli.start({ ...flags[n], ...own }));
    }
  } catch (err) {
    await Promise.all([...running.values()].map((r) => r.stop()));
    throw err;
  }
  if (file && !kept) keepPorts(file, listening(clis, running));
  if (file)
    console.log(
      `${kept ? 'ports kept from' : 'ports kept in'} ${file} (a restart with --data-dir ${dir} listens on the same addresses)`,
    );
  return running;
}

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  const names = available();
  if (name === '--help' || (name === 'all' && rest.includes('--help'))) {
    console.log(usage(names));
    process.exit(0);
  }
  if (!name || (name !== 'all' && !names.includes(name))) throw new Error(usage(names));
  if (name !== 'all' && rest.includes('--help')) {
    console.log((await load(name)).usage);
    process.exit(0);
  }
  const running = await startAll(name, names, parseFlags(rest));
  const addresses = Object.fromEntries([...running].map(([n, r]) => [n, r.addresses]));
  console.log(`${name === 'all' ? 'emulators' : `${name} emulator`} ready ${JSON.stringify(addresses)}`);
  const stop = async () => {
    await Promise.all([...running.values()].map((r) => r.stop()));
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
