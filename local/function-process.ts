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
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort, PortInUseError } from './ports';

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
  /** With {@link startOnFirstRequest}: the listener on `port` that forwards to the process. */
  private front: Server | null = null;
  private readonly frontSockets = new Set<Socket>();
  /** The port the process itself listens on: `port`, or a private one behind {@link front}. */
  private processPort: number;
  /** True until the first connection to {@link front} started the process. */
  private waitingForFirstRequest = false;
  private firstStart: Promise<void> | null = null;
  /** Resolves once the running process listens. */
  private listening: Promise<void> = Promise.resolve();

  constructor(
    readonly name: FunctionName,
    readonly port: number,
    private readonly env: Record<string, string>,
    private readonly onLine: (line: FunctionLogLine) => void,
    private readonly cwd: string,
    /** The bundled function host to run; without it the host runs from its sources through `tsx`. */
    private readonly bundle?: string,
  ) {
    this.processPort = port;
  }

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
    const args = [...host, this.name, String(this.processPort), '--lifeline'];
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
    this.listening = this.waitListening(child, timeoutMs);
    await this.listening;
  }

  /**
   * Listens on the port and starts the process when the first connection arrives, forwarding every
   * connection to it from then on. For test stacks, where most runs never call the backfill or the writer
   * and a start costs about a CPU-second; the process then checks its configuration on that first request,
   * not before the stack is ready. After {@link kill} connections are refused until {@link start}, as they
   * are by a killed process.
   * @throws PortInUseError when another process holds the port.
   */
  async startOnFirstRequest(): Promise<void> {
    if (this.child || this.front) return;
    const front = createServer((socket) => this.forward(socket));
    await new Promise<void>((resolve, reject) => {
      front.once('error', (err: NodeJS.ErrnoException) =>
        reject(err.code === 'EADDRINUSE' ? new PortInUseError(this.port, this.name) : err),
      );
      front.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.processPort = await freePort();
    this.front = front;
    this.waitingForFirstRequest = true;
  }

  private forward(socket: Socket): void {
    this.frontSockets.add(socket);
    socket.once('close', () => this.frontSockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.pause();
    let ready: Promise<void>;
    if (this.child) ready = this.listening;
    else if (this.waitingForFirstRequest) {
      this.firstStart ??= this.start()
        .catch((err: unknown) => {
          // Said as the function's own error line: the connection that asked for it is only refused.
          const text = `the ${this.name} function did not start on its first request: ${String(err)}`;
          this.onLine({ function: this.name, severity: 'ERROR', text });
          throw err;
        })
        .finally(() => {
          this.waitingForFirstRequest = false;
        });
      ready = this.firstStart;
    } else ready = Promise.reject(new Error(`the ${this.name} function is not running`));
    ready.then(
      () => {
        const upstream = connect(this.processPort, '127.0.0.1');
        upstream.on('error', () => socket.destroy());
        socket.once('close', () => upstream.destroy());
        upstream.once('close', () => socket.destroy());
        socket.pipe(upstream).pipe(socket);
        socket.resume();
      },
      () => socket.destroy(),
    );
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

  /** Stops gracefully (SIGTERM), then kills if it lingers; closes the listener of {@link startOnFirstRequest}. */
  async stop(graceMs = 3_000): Promise<void> {
    this.waitingForFirstRequest = false;
    await this.firstStart?.catch(() => {});
    const child = this.child;
    if (child) {
      killGroup(child, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
      await this.exited;
      clearTimeout(timer);
    }
    const front = this.front;
    if (!front) return;
    this.front = null;
    for (const socket of this.frontSockets) socket.destroy();
    await new Promise((resolve) => front.close(resolve));
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
