/**
 * An emulator in its own process, started through the shared emulator CLI. The throughput benchmark keeps the
 * emulators out of the measured process so that its CPU time is the reader's alone.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

/** A running emulator process and its named addresses. */
export interface ChildEmulator {
  addresses: Record<string, string>;
  stop(): Promise<void>;
}

const ROOT = join(__dirname, '..', '..');

function waitForReady(child: ChildProcess, name: string): Promise<Record<string, Record<string, string>>> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${name} emulator did not start: ${err}`)), 60_000);
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /ready (\{.*\})/.exec(out);
      if (!m?.[1]) return;
      clearTimeout(timer);
      resolve(JSON.parse(m[1]) as Record<string, Record<string, string>>);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} emulator exited with ${code}: ${err}`));
    });
  });
}

/** Starts `npm run emulator -- <name> <args>` as a child process and waits for its ready line. */
export async function startChildEmulator(name: string, args: string[]): Promise<ChildEmulator> {
  const tsx = join(ROOT, 'node_modules', '.bin', 'tsx');
  const child = spawn(tsx, [join(ROOT, 'local', 'emulators', 'cli.ts'), name, ...args], {
    cwd: ROOT,
    env: { ...process.env, METADATA_SERVER_DETECTION: 'none' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const all = await waitForReady(child, name);
  return {
    addresses: all[name] ?? {},
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
