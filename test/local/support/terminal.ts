/**
 * `npm start` in a real pseudo-terminal: `script` (util-linux) runs the command on a new pty, and what
 * the test writes to its input goes through the pty's line discipline, so `\x03` is a real Ctrl-C — the
 * kernel sends SIGINT to the terminal's whole foreground process group, exactly as a keypress does.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The repository root. */
export const ROOT = join(__dirname, '..', '..', '..');

/** A command running on its own pseudo-terminal. */
export class Terminal {
  private readonly child: ChildProcessWithoutNullStreams;
  private text = '';
  private waiters: Array<() => void> = [];
  /** Resolves with the exit code of the command (`script -e` passes it through). */
  readonly exited: Promise<number | null>;

  constructor(command: string, env: Record<string, string> = {}) {
    this.child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: '', METADATA_SERVER_DETECTION: 'none', ...env },
    });
    const take = (d: Buffer) => {
      this.text += d.toString('utf8');
      for (const w of this.waiters.splice(0)) w();
    };
    this.child.stdout.on('data', take);
    this.child.stderr.on('data', take);
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  /** Everything the terminal showed so far (escape sequences removed, CRLF as LF). */
  get output(): string {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences
    return this.text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');
  }

  /** Resolves once `pattern` appears in the output; rejects after `timeoutMs` with the output so far. */
  async waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = pattern.exec(this.output);
      if (m) return m;
      if (Date.now() > deadline) {
        throw new Error(
          `no ${pattern} within ${timeoutMs} ms; the terminal shows:\n${this.output.slice(-4000)}`,
        );
      }
      await new Promise<void>((r) => {
        const timer = setTimeout(r, 250);
        this.waiters.push(() => {
          clearTimeout(timer);
          r();
        });
      });
    }
  }

  /** Types Ctrl-C. */
  interrupt(): void {
    this.child.stdin.write('\x03');
  }

  /** Kills the whole session (test clean-up). */
  kill(): void {
    this.child.kill('SIGKILL');
  }
}

/**
 * This checkout's function host, as its processes' command lines name it (other checkouts' stacks differ):
 * its bundle (local/function-bundle.ts), which the stack starts, or its sources, run through `tsx`.
 */
const FUNCTION_HOSTS = [
  join(ROOT, 'node_modules', '.cache', 'sluice-functions', 'function-host-'),
  join(ROOT, 'local', 'function-host.ts'),
];

/** Pids of live function processes of this checkout whose command line contains every one of `parts`. */
export function functionHostsWith(...parts: string[]): number[] {
  return FUNCTION_HOSTS.flatMap((host) => processesWith(host, ...parts));
}

/** Pids of live processes whose command line contains every one of `parts`. */
export function processesWith(...parts: string[]): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (parts.every((p) => cmdline.includes(p))) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/** The function processes of a stack, found by the ports in its ready line. */
export function functionProcesses(functions: Record<string, string | null>): number[] {
  return Object.values(functions).flatMap((url) => (url ? functionHostsWith(` ${new URL(url).port} `) : []));
}
