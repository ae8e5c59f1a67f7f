/**
 * `npm start` that cannot run: `--help`, a flag without its value, a busy port (named by its flag, nothing
 * started), a function whose port is taken between the check and the start, and a script that throws while
 * its stack runs — none of them leaves a function process behind.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FunctionProcess } from '../../local/function-process';
import { functionHostsWith, functionProcesses, processesWith, ROOT, Terminal } from './support/terminal';

let terminal: Terminal | undefined;
/** Scripts started by a test, killed however the test ends (a failed assertion must not leave a stack). */
const scripts: Array<{ kill(): void }> = [];
afterEach(() => {
  terminal?.kill();
  for (const s of scripts.splice(0)) s.kill();
});

async function run(args: string): Promise<{ code: number | null; output: string }> {
  terminal = new Terminal(`npm start -- ${args}`);
  const code = await terminal.exited;
  return { code, output: terminal.output };
}

function occupy(): Promise<Server & { port: number }> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(Object.assign(server, { port: typeof address === 'object' && address ? address.port : 0 }));
    });
  });
}

/**
 * Free ports for the four functions, as `npm start` flags, and the check that no process serves one of them:
 * a run that fails before its ready line names no port, and other files' stacks may run meanwhile (jest
 * workers), so a run is only answerable for the processes on the ports it was given.
 */
async function ownFunctionPorts(): Promise<{ flags: string; left(): number[] }> {
  const servers = await Promise.all(['scheduler', 'reader', 'backfill', 'writer'].map(() => occupy()));
  const ports = servers.map((s) => s.port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  const [scheduler, reader, backfill, writer] = ports;
  return {
    flags: `--scheduler-port ${scheduler} --reader-port ${reader} --backfill-port ${backfill} --writer-port ${writer}`,
    left: () => ports.flatMap((port) => functionHostsWith(` ${port} `)),
  };
}

/**
 * `npm start -- <args>` on ports of its own. Another file's stack may take one of the picked ports between the
 * pick and the start (its functions listen on free ports too); `npm start` then refuses the flag with exit 2,
 * as it must, and the run is tried again on new ports — the only refusal that is not this test's answer.
 */
async function runOnOwnPorts(
  args: string,
  timeoutMs = 60_000,
): Promise<{
  code: number | null | 'timeout';
  output: string;
  own: Awaited<ReturnType<typeof ownFunctionPorts>>;
}> {
  for (let attempt = 1; ; attempt++) {
    const own = await ownFunctionPorts();
    terminal = new Terminal(`npm start -- ${args} ${own.flags}`);
    const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), timeoutMs).unref());
    const code = await Promise.race([terminal.exited, timeout]);
    const output = terminal.output;
    if (code === 2 && /\(--\w+-port\) is already in use/.test(output) && attempt < 3) continue;
    return { code, output, own };
  }
}

it('answers --help with the usage and exit 0', async () => {
  const { code, output } = await run('--help');
  expect(code).toBe(0);
  expect(output).toContain('usage: npm start -- [options]');
  expect(output).toContain('--env SLUICE_<NAME>=<value>');
}, 60_000);

it('refuses a flag without its value', async () => {
  const { code, output } = await run('--duration');
  expect(code).toBe(2);
  expect(output).toContain('--duration needs a value');
}, 60_000);

it('names the flag of a busy port and starts nothing', async () => {
  const busy = await occupy();
  try {
    const { code, output } = await run(`--reader-port ${busy.port}`);
    expect(code).toBe(2);
    expect(output).toContain(`port ${busy.port} (--reader-port) is already in use`);
    expect(output).not.toContain('sluice local ready');
    expect(functionHostsWith(` ${busy.port} `)).toEqual([]);
  } finally {
    busy.close();
  }
}, 60_000);

it('refuses to run a stack whose functions found their configuration invalid, leaving nothing behind', async () => {
  const { code, output, own } = await runOnOwnPorts('--env SLUICE_WINDOW_MAX_MS=soon');
  expect(code).toBe(3);
  expect(output).toContain(
    "the local stack failed to start: the scheduler function's configuration is invalid:",
  );
  expect(output).toMatch(/SLUICE_WINDOW_MAX_MS \(window\.maxMs\): must be a whole number/);
  expect(output).not.toContain('sluice local ready');
  expect(own.left()).toEqual([]);
}, 90_000);

it('runs a function from its sources when its bundle was removed meanwhile', async () => {
  const port = await occupy().then((s) => {
    s.close();
    return s.port;
  });
  const gone = join(ROOT, 'node_modules', '.cache', 'sluice-functions', 'function-host-removed.js');
  const fn = new FunctionProcess('reader', port, {}, () => {}, ROOT, gone);
  try {
    await fn.start();
    expect(fn.running).toBe(true);
    expect(processesWith(join(ROOT, 'local', 'function-host.ts'), ` ${port} `)).toHaveLength(1);
  } finally {
    await fn.stop();
  }
}, 60_000);

it('says which port a function could not listen on', async () => {
  const busy = await occupy();
  try {
    const fn = new FunctionProcess('reader', busy.port, {}, () => {}, ROOT);
    // A PortInUseError: the stack picks new ports for its functions when one of its picks was taken.
    await expect(fn.start()).rejects.toMatchObject({
      name: 'PortInUseError',
      port: busy.port,
      role: 'reader',
      message: `port ${busy.port} (reader) is already in use`,
    });
  } finally {
    busy.close();
  }
}, 60_000);

/** Runs a script that starts a stack and then throws (`throw`) or waits to be killed (`wait`). */
async function scriptWithStack(then: 'throw' | 'wait'): Promise<{
  out: () => string;
  functions: Record<string, string>;
  exited: Promise<number | null>;
  kill(): void;
}> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-script-'));
  const script = join(dir, 'script.ts');
  writeFileSync(
    script,
    `import { startLocalStack } from ${JSON.stringify(join(ROOT, 'local', 'stack'))};
     startLocalStack({ churnMs: 0 }).then((stack) => {
       console.log('functions ' + JSON.stringify(stack.ready.functions));
       if (${JSON.stringify(then)} === 'throw') throw new Error('the script failed');
     });`,
  );
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '', METADATA_SERVER_DETECTION: 'none' },
  });
  let out = '';
  const take = (d: Buffer) => {
    out += d.toString();
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  scripts.push({ kill: () => child.kill('SIGKILL') });
  const deadline = Date.now() + 50_000;
  while (!/functions \{.*\}/.test(out) && Date.now() < deadline) {
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const m = /functions (\{.*\})/.exec(out);
  if (!m) throw new Error(`the script did not start its stack:\n${out}`);
  return { out: () => out, functions: JSON.parse(m[1]!), exited, kill: () => child.kill('SIGKILL') };
}

async function noneLeft(functions: Record<string, string>): Promise<void> {
  // The children notice their lifeline close; give them a moment to be gone.
  const deadline = Date.now() + 5_000;
  while (functionProcesses(functions).length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(functionProcesses(functions)).toEqual([]);
}

it('leaves no function process behind when a script throws with its stack running', async () => {
  const script = await scriptWithStack('throw');
  expect(await script.exited).not.toBe(0);
  expect(script.out()).toContain('the script failed');
  await noneLeft(script.functions);
}, 60_000);

it('leaves no function process behind when the process that started them is killed', async () => {
  const script = await scriptWithStack('wait');
  expect(functionProcesses(script.functions)).toHaveLength(Object.keys(script.functions).length);
  script.kill();
  await script.exited;
  await noneLeft(script.functions);
}, 60_000);

it('ends at once with the full reason and exit 3 when the pipeline is stopped on its configuration', async () => {
  const { code, output, own } = await runOnOwnPorts(`--env 'SLUICE_TABLES={"Nope": {"replica": "nope"}}'`);
  expect({ code, output }).toMatchObject({ code: 3 });
  expect(output).toMatch(/pipeline stopped: .*\n(.*\n)*.*Nope/);
  expect(output).toContain('nothing replicates until this is fixed; no verdict');
  expect(output).not.toContain('verdict:');
  expect(own.left()).toEqual([]);
}, 90_000);

it('calls an unknown flag without a value an unknown flag', async () => {
  const { code, output } = await run('--bogus');
  expect(code).toBe(2);
  expect(output).toContain('--bogus: unknown flag');
  expect(output).not.toContain('needs a value');
}, 60_000);
