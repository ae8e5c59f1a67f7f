/**
 * The function artifact as deployed: build, lay out the archive's entries exactly as the program uploads
 * them, install production dependencies from the lockfile, start each function with the functions
 * framework and call its health route — and, with an invalid configuration, see it exit before it listens
 * (what fails the revision's startup probe, ADR-2004).
 *
 * The archive's bytes are zipped by the Pulumi engine from the program's `AssetArchive`, not by our code,
 * so the test reproduces what the platform sees after unpacking it: the same entries (one definition,
 * `sourceArchiveEntries`) written to a folder. Needs the npm registry; skipped, saying why, without it.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FUNCTION_NAMES, type FunctionName } from '../../infra/deployment-schema';
import { functionEnvironment } from '../../infra/resources/functions';
import { buildSettings } from '../../infra/settings';
import { sourceArchiveEntries, writeEntries } from '../../infra/source-archive';
import { PROJECT_NUMBER, stackConfig } from './harness';

const ROOT = resolve(__dirname, '../..');
const SETUP_TIMEOUT_MS = 420_000;
const children: ChildProcess[] = [];
let dir = '';
let skipReason: string | undefined;

function registryReachable(): Promise<boolean> {
  return new Promise((done) => {
    const req = httpsGet('https://registry.npmjs.org/-/ping', { timeout: 5000 }, (res) => {
      res.resume();
      done((res.statusCode ?? 500) < 500);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => done(false));
  });
}

beforeAll(async () => {
  if (!(await registryReachable())) {
    skipReason = 'the npm registry is unreachable, so production dependencies cannot be installed';
    console.warn(`artifact test skipped: ${skipReason}`);
    return;
  }
  // The root build (`npm run build`), then the archive exactly as the program builds it.
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  dir = mkdtempSync(join(tmpdir(), 'sluice-artifact-'));
  writeEntries(sourceArchiveEntries(ROOT), dir);
  execFileSync('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: dir,
    stdio: 'inherit',
    timeout: SETUP_TIMEOUT_MS - 60_000,
  });
}, SETUP_TIMEOUT_MS);

afterAll(() => {
  // SIGKILL: the framework's server catches SIGTERM and keeps the process (and so jest) alive.
  for (const c of children) c.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => done(port));
    });
  });
}

/**
 * The framework's own start sequence (options → load package.json `main` from the source folder → server),
 * bound to loopback only; its CLI would listen on every interface.
 */
const LAUNCHER = `
const { join } = require('node:path');
const ff = join(process.cwd(), 'node_modules/@google-cloud/functions-framework/build/src');
const { parseOptions } = require(join(ff, 'options.js'));
const { getUserFunction } = require(join(ff, 'loader.js'));
const { getServer } = require(join(ff, 'server.js'));
(async () => {
  const options = parseOptions(process.argv);
  const loaded = await getUserFunction(options.sourceLocation, options.target, options.signatureType);
  if (!loaded) { console.error('could not load ' + options.target); process.exit(1); }
  options.signatureType = loaded.signatureType;
  getServer(loaded.userFunction, options).listen(options.port, '127.0.0.1', () => console.log('listening'));
})();
`;

function getJson(port: number, path: string): Promise<{ status: number; body: unknown }> {
  return new Promise((done, fail) => {
    const req = httpGet({ host: '127.0.0.1', port, path, timeout: 2000 }, (res) => {
      let text = '';
      res.on('data', (c) => {
        text += String(c);
      });
      res.on('end', () => done({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', fail);
  });
}

async function waitForHealth(port: number): Promise<{ status: number; body: unknown }> {
  let last: unknown;
  for (let i = 0; i < 100; i++) {
    try {
      return await getJson(port, '/healthz');
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`no answer on /healthz: ${String(last)}`);
}

/** Starts one function from the unpacked archive as the platform does, with `env` as its environment. */
function start(name: string, port: number, env: Record<string, string>) {
  const child = spawn(
    process.execPath,
    ['-e', LAUNCHER, '--', `--target=${name}`, `--port=${port}`, `--source=${dir}`],
    {
      cwd: dir,
      env: { PATH: process.env.PATH, NODE_ENV: 'production', METADATA_SERVER_DETECTION: 'none', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  const output = { stdout: '', stderr: '' };
  child.stdout?.on('data', (c) => {
    output.stdout += String(c);
  });
  child.stderr?.on('data', (c) => {
    output.stderr += String(c);
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { output, exited };
}

/** The environment the deployment gives the function (URLs as the platform would have them). */
function deployedEnvironment(name: FunctionName): Record<string, string> {
  return functionEnvironment(buildSettings(stackConfig()), name, PROJECT_NUMBER);
}

test.each(FUNCTION_NAMES)(
  'the deployed %s function starts from the archive and answers its health route',
  async (name) => {
    if (skipReason) return;
    const port = await freePort();
    const { output } = start(name, port, deployedEnvironment(name));
    const answer = await waitForHealth(port).catch((err: Error) => {
      throw new Error(`${err.message}\n${output.stdout}${output.stderr}`);
    });
    expect(answer).toEqual({ status: 200, body: { function: name, ok: true } });
  },
  60_000,
);

test.each(FUNCTION_NAMES)(
  'the deployed %s function with an invalid configuration exits before it listens, naming the problem',
  async (name) => {
    if (skipReason) return;
    const port = await freePort();
    // What Cloud Run's default startup probe sees: the container exits and its port never opens.
    const { SLUICE_SPANNER_DATABASE: _, ...env } = deployedEnvironment(name);
    expect(env.SLUICE_ON_INVALID_CONFIG).toBe('exit');
    const { output, exited } = start(name, port, env);
    expect(await exited).toBe(1);
    expect(output.stdout).not.toContain('listening');
    const invalid = output.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.message === 'config.invalid');
    expect(invalid).toHaveLength(1);
    expect(invalid[0]).toMatchObject({ severity: 'ERROR', function: name, onInvalid: 'exit' });
    expect(JSON.stringify(invalid[0]?.problems)).toContain('SLUICE_SPANNER_DATABASE');
    // The framework's own report of a module that refused to load carries the problems too.
    expect(output.stderr).toContain(`the ${name} function's configuration is invalid`);
    expect(output.stderr).toContain('SLUICE_SPANNER_DATABASE');
  },
  60_000,
);
