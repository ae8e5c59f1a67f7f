/**
 * One function as a child process on loopback, started from the bundled host (local/function-bundle.ts) or,
 * when none is given, from the TypeScript sources through `tsx`. The handle can kill it at any moment (SIGKILL: a crash at a random point) and restart it on
 * the same port, so the Cloud Tasks emulator's targets stay valid.
 *
 * The stack owns its children (ADR-2001): each runs in its own process group, so a Ctrl-C in the terminal
 * reaches only `npm start`, which then stops them in order; each holds a lifeline pipe to this process and
 * exits when it closes; and every child still running when this process exits is killed on the way out.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PortInUseError } from './ports';

/** The four functions of the pipeline. */
export type FunctionName = 'scheduler' | 'reader' | 'backfill' | 'writer';

/** One log line of a function, with its severity when it is a structured (JSON) line. */
export interface FunctionLogLine {
  function: FunctionName;
  severity: string;
  text: string;
  json?: Record<string, unknown>;
}

const HOST = join(__dirname, 'function-host.ts');
const READY = /^function-host listening (\{.*\})$/;
const FAILED = /^function-host failed (\{.*\})$/;

/** Every child process started and not yet exited, killed synchronously if this process exits first. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Kills every function process this process started (their whole process groups), at once. */
export function killAllFunctionProcesses(): void {
  for (const child of live) killGroup(child, 'SIGKILL');
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

function track(child: ChildProcess): void {
  if (!exitHookInstalled) {
    process.once('exit', killAllFunctionProcesses);
    exitHookInstalled = true;
  }
  live.add(child);
  child.once('exit', () => live.delete(child));
}

function parseLine(name: FunctionName, text: string, stream: 'stdout' | 'stderr'): FunctionLogLine {
  try {
    const json = JSON.parse(text) as unknown;
    if (json && typeof json === 'object' && !Array.isArray(json)) {
      const j = json as Record<string, unknown>;
      return { function: name, severity: String(j.severity ?? 'DEFAULT'), text, json: j };
    }
  } catch {
    // Not a structured line: a plain message from the runtime or the framework.
  }
  return { function: name, severity: stream === 'stderr' ? 'ERROR' : 'INFO', text };
}

/** A function server process and its controls. */
export class FunctionProcess {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  /** Number of times the process was started. */
  starts = 0;

  constructor(
    readonly name: FunctionName,
    readonly port: number,
    private readonly env: Record<string, string>,
    private readonly onLine: (line: FunctionLogLine) => void,
    private readonly cwd: string,
    /** The bundled function host to run; without it the host runs from its sources through `tsx`. */
    private readonly bundle?: string,
  ) {}

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Process id while running. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Whether the process is running. */
  get running(): boolean {
    return this.child !== null;
  }

  /**
   * Starts the process and resolves once it listens (rejects if it exits first or takes too long).
   * @throws PortInUseError when another process holds the port.
   */
  async start(timeoutMs = 30_000): Promise<void> {
    if (this.child) return;
    // A bundle removed meanwhile (a day old, by another start in this checkout): run the sources instead.
    const bundled = this.bundle !== undefined && existsSync(this.bundle);
    const host = bundled ? ['--enable-source-maps', this.bundle!] : ['--import', 'tsx', HOST];
    const args = [...host, this.name, String(this.port), '--lifeline'];
    const child = spawn(process.execPath, args, {
      cwd: this.cwd,
      env: { PATH: process.env.PATH ?? '', ...this.env, SLUICE_FUNCTION: this.name },
      // Own process group: the terminal's SIGINT is for `npm start`, which stops the functions itself.
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    track(child);
    this.child = child;
    this.starts++;
    this.exited = new Promise((resolve) =>
      child.once('exit', () => {
        if (this.child === child) this.child = null;
        resolve();
      }),
    );
    await this.waitListening(child, timeoutMs);
  }

  private waitListening(child: ChildProcess, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.name} did not start in ${timeoutMs} ms`)),
        timeoutMs,
      );
      const done = (err?: Error) => {
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
      let reason: string | undefined;
      let portTaken = false;
      const stderr: string[] = [];
      child.once('exit', (code) => {
        if (portTaken) return done(new PortInUseError(this.port, this.name));
        const why = reason ?? (stderr.length > 0 ? `: ${stderr.slice(-5).join('\n')}` : '');
        done(new Error(`the ${this.name} function exited with ${code} before listening${why}`));
      });
      const out = createInterface({ input: child.stdout! });
      out.on('line', (text) => {
        const failed = FAILED.exec(text);
        if (failed) {
          const f = JSON.parse(failed[1]!) as { reason: string; code?: string };
          reason = `: ${f.reason}`;
          portTaken = f.code === 'EADDRINUSE';
        } else if (READY.test(text)) done();
        else this.onLine(parseLine(this.name, text, 'stdout'));
      });
      createInterface({ input: child.stderr! }).on('line', (text) => {
        stderr.push(text);
        if (stderr.length > 20) stderr.shift();
        this.onLine(parseLine(this.name, text, 'stderr'));
      });
    });
  }

  /** Kills the process with `signal` (default SIGKILL, a crash) and waits for it to be gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child) return;
    killGroup(child, signal);
    await this.exited;
  }

  /** Kills (if running) and starts again on the same port. */
  async restart(): Promise<void> {
    await this.kill();
    await this.start();
  }

  /** Stops gracefully (SIGTERM), then kills if it lingers. */
  async stop(graceMs = 3_000): Promise<void> {
    const child = this.child;
    if (!child) return;
    killGroup(child, 'SIGTERM');
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Each function checked its configuration at start: refuse to go on when one of them found problems. */
export async function assertFunctionsHealthy(functions: FunctionProcess[]): Promise<void> {
  const problems: string[] = [];
  for (const f of functions) {
    const res = await fetch(`${f.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
    if (res.ok) continue;
    const body = (await res.json().catch(() => ({}))) as { problems?: string[] };
    const lines = body.problems ?? [`HTTP ${res.status}`];
    problems.push(`the ${f.name} function's configuration is invalid:\n  ${lines.join('\n  ')}`);
  }
  if (problems.length > 0) throw new Error(problems.join('\n'));
}
