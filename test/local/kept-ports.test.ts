/**
 * A data directory keeps its addresses: `npm run emulators -- --data-dir` and `npm start -- --data-dir`
 * listen on the first start's ports again after a restart, say so, and name a kept port another process
 * took; `--ports-from` puts the emulators on consecutive ports; every `--help` prints the usage and exits 0.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalStack } from '../../local/stack';

process.env.METADATA_SERVER_DETECTION = 'none';

const CLI = join(__dirname, '..', '..', 'local', 'emulators', 'cli.ts');
let dir: string;
const children: ChildProcess[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-kept-ports-'));
});

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

function run(args: string[]): Run {
  const child = spawn(process.execPath, [require.resolve('tsx/cli'), CLI, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, out: () => out, exited };
}

async function ready(r: Run): Promise<Record<string, Record<string, string>>> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const m = /emulators ready (\{.*\})/.exec(r.out());
    if (m) return JSON.parse(m[1] as string);
    if (r.child.exitCode !== null) throw new Error(`emulators exited with ${r.child.exitCode}: ${r.out()}`);
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`no ready line: ${r.out()}`);
}

async function stop(r: Run): Promise<void> {
  r.child.kill('SIGTERM');
  expect(await r.exited).toBe(0);
}

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

it('every --help prints the usage and exits 0, starting nothing', async () => {
  for (const args of [
    ['all', '--help'],
    ['--help'],
    ['spanner', '--help'],
    ['gcs', '--port', '1', '--help'],
  ]) {
    const r = run(args);
    expect(await r.exited).toBe(0);
    expect(r.out()).toMatch(/^usage: npm run emulator/);
    expect(r.out()).not.toMatch(/ready \{/);
  }
}, 60_000);

it('npm run emulators -- --data-dir listens on the same addresses after a restart', async () => {
  const first = run(['all', '--data-dir', dir]);
  const before = await ready(first);
  const file = join(dir, 'emulators-ports.json');
  expect(first.out()).toContain(`ports kept in ${file}`);
  expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')))).toContain('spanner.adminPort');
  await stop(first);

  const second = run(['all', '--data-dir', dir]);
  expect(await ready(second)).toEqual(before);
  expect(second.out()).toContain(`ports kept from ${file}`);
  await stop(second);

  // A kept port another process took: refused, naming the port, its role and the file.
  const spannerPort = Number(before.spanner?.grpc?.split(':')[1]);
  const squatter = await listen(spannerPort);
  try {
    const third = run(['all', '--data-dir', dir]);
    expect(await third.exited).toBe(2);
    expect(third.out()).toContain(`port ${spannerPort} (spanner.port, kept in ${file}) is already in use`);
  } finally {
    squatter.close();
  }
}, 120_000);

it('--ports-from puts every emulator on consecutive ports, in the order of the ready line', async () => {
  const from = 21_000 + Math.floor(Math.random() * 9_000);
  const r = run(['all', '--ports-from', String(from)]);
  const addresses = await ready(r);
  const ports = Object.values(addresses).flatMap((a) =>
    Object.values(a).map((v) => Number(/:(\d+)\/?$/.exec(v)?.[1])),
  );
  expect(ports).toEqual(ports.map((_, i) => from + i));
  await stop(r);
}, 60_000);

it('npm start -- --data-dir keeps the stack addresses of its first start', async () => {
  const first = await startLocalStack({ dataDir: dir, churnMs: 0 });
  const before = first.ready;
  await first.stop();
  const second = await startLocalStack({ dataDir: dir, churnMs: 0 });
  try {
    expect(second.ready).toEqual(before);
  } finally {
    await second.stop();
  }
}, 120_000);
