/**
 * Writer throughput: requests of mutations posted over HTTP to the writer function, running as its own
 * process exactly as `npm start` runs it, into the Spanner emulator (another process). The writer's CPU time
 * is read from the kernel for its process alone, so mutations per CPU-second are the writer's: HTTP and JSON
 * parsing, typing by the schema, batching, the client's encoding and gRPC. The same rows sent by the bare
 * client (`batchWriteAtLeastOnce` with prebuilt groups, measured in this process) give the floor the writer's
 * work adds to. Small rows (3 columns) and wide rows (24 columns of mixed types).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { MutationGroup, Spanner } from '@google-cloud/spanner';
import { startChildEmulator } from './child-emulator';
import { profilePhase } from './profile';
import { collectGarbage } from './stats';

const ROOT = join(__dirname, '..', '..');
const PROJECT = 'sluice-bench';
const DATABASE = `projects/${PROJECT}/instances/bench/databases/writer`;
const DDL = [
  'CREATE TABLE Small (Id INT64 NOT NULL, Name STRING(MAX), Qty INT64) PRIMARY KEY (Id)',
  `CREATE TABLE Wide (Id INT64 NOT NULL, S1 STRING(MAX), S2 STRING(MAX), S3 STRING(MAX), S4 STRING(MAX),
   S5 STRING(MAX), S6 STRING(MAX), I1 INT64, I2 INT64, I3 INT64, I4 INT64, F1 FLOAT64, F2 FLOAT64, F3 FLOAT64,
   F4 FLOAT64, N1 NUMERIC, N2 NUMERIC, T1 TIMESTAMP, T2 TIMESTAMP, B1 BYTES(MAX), J1 JSON, A1 ARRAY<STRING(MAX)>,
   D1 DATE, Bo BOOL) PRIMARY KEY (Id)`,
];

/** One measured run. */
export interface WriterRun {
  variant: 'writer' | 'bare client';
  shape: 'small' | 'wide';
  mutations: number;
  cpuMs: number;
  wallMs: number;
}

function smallRow(id: number): Record<string, unknown> {
  return { Id: String(id), Name: `name ${id}`, Qty: id % 1000 };
}

function wideRow(id: number): Record<string, unknown> {
  const s = (k: number) => `${k}-${id}-${'x'.repeat(32)}`;
  return {
    Id: String(id),
    ...Object.fromEntries([1, 2, 3, 4, 5, 6].map((k) => [`S${k}`, s(k)])),
    ...Object.fromEntries([1, 2, 3, 4].map((k) => [`I${k}`, String(id * k)])),
    ...Object.fromEntries([1, 2, 3, 4].map((k) => [`F${k}`, id / (k + 1)])),
    N1: `${id}.125`,
    N2: '-0.000000001',
    T1: '2025-01-01T00:00:00.123456789Z',
    T2: '2025-06-30T23:59:59.999999999+02:00',
    B1: Buffer.alloc(48, id % 256).toString('base64'),
    J1: { id, tags: ['a', 'b'], nested: { ok: true } },
    A1: ['one', 'two', 'three'],
    D1: '2025-02-28',
    Bo: id % 2 === 0,
  };
}

const rowOf = (shape: 'small' | 'wide') => (shape === 'small' ? smallRow : wideRow);

/** CPU time of a process in ms, from /proc (user + system; clock ticks of 10 ms). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function startWriter(
  env: Record<string, string>,
  profileDir: string | undefined,
): Promise<{ url: string; child: ChildProcess }> {
  // A profile covers the writer process's whole life (warm-up included): it is written when the process exits,
  // one file per thread (the loader's thread too); the writer's is the largest `CPU.*.cpuprofile`.
  const profile = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  const child = spawn(
    process.execPath,
    [...profile, '--import', 'tsx', join(ROOT, 'local', 'function-host.ts'), 'writer', '0'],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the writer exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /^function-host listening (\{.*\})$/.exec(line);
      if (m?.[1]) resolve((JSON.parse(m[1]) as { port: number }).port);
    });
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

async function post(url: string, body: string): Promise<void> {
  const res = await fetch(`${url}/mutations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const answer = (await res.json()) as { applied?: number };
  if (res.status !== 200)
    throw new Error(`the writer answered ${res.status}: ${JSON.stringify(answer).slice(0, 500)}`);
}

/** Stops the writer: SIGTERM when its profile must be written on a clean exit, SIGKILL otherwise. */
async function stopWriter(child: ChildProcess, graceful: boolean): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(graceful ? 'SIGTERM' : 'SIGKILL');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Runs `work` over `items` with `n` in flight. */
async function inFlight<T>(items: T[], n: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

async function writerRun(
  url: string,
  pid: number,
  shape: 'small' | 'wide',
  from: number,
  count: number,
  perRequest: number,
): Promise<WriterRun> {
  const row = rowOf(shape);
  const table = shape === 'small' ? 'Small' : 'Wide';
  const bodies: string[] = [];
  for (let i = 0; i < count; i += perRequest)
    bodies.push(
      JSON.stringify({
        mutations: Array.from({ length: Math.min(perRequest, count - i) }, (_, k) => ({
          op: 'insertOrUpdate',
          table,
          row: row(from + i + k),
        })),
      }),
    );
  const cpu = processCpuMs(pid);
  const wall = performance.now();
  await inFlight(bodies, 4, (b) => post(url, b));
  return {
    variant: 'writer',
    shape,
    mutations: count,
    cpuMs: processCpuMs(pid) - cpu,
    wallMs: performance.now() - wall,
  };
}

async function bareRun(
  spanner: Spanner,
  shape: 'small' | 'wide',
  from: number,
  count: number,
  perCall: number,
): Promise<WriterRun> {
  const database = spanner.instance('bench').database('writer');
  const row = rowOf(shape);
  const table = shape === 'small' ? 'Small' : 'Wide';
  const starts = Array.from({ length: Math.ceil(count / perCall) }, (_, i) => i * perCall);
  const cpu = process.cpuUsage();
  const wall = performance.now();
  await inFlight(starts, 4, async (start) => {
    const groups = Array.from({ length: Math.min(perCall, count - start) }, (_, k) => {
      const g = new MutationGroup();
      const r = row(from + start + k);
      if (shape === 'wide') for (const f of ['F1', 'F2', 'F3', 'F4']) r[f] = Spanner.float(r[f] as number);
      if (shape === 'wide') r.J1 = JSON.stringify(r.J1);
      g.upsert(table, r);
      return g;
    });
    await new Promise<void>((resolve, reject) =>
      database
        .batchWriteAtLeastOnce(groups)
        .on('data', () => {})
        .on('error', reject)
        .on('end', resolve),
    );
  });
  const used = process.cpuUsage(cpu);
  return {
    variant: 'bare client',
    shape,
    mutations: count,
    cpuMs: (used.user + used.system) / 1000,
    wallMs: performance.now() - wall,
  };
}

/** Options of {@link writerThroughput}. */
export interface WriterThroughputOptions {
  runs: number;
  small: number;
  wide: number;
  perRequest: number;
  /**
   * Where CPU profiles go: the writer process's whole life (`CPU.*.cpuprofile`, the largest is its main
   * thread's) and each measured run of the bare client (`bare-client-<shape>-<run>.cpuprofile`).
   */
  profileDir?: string;
}

/** Every run of every variant and shape (interleaved), after one unmeasured warm-up of each. */
export async function writerThroughput(o: WriterThroughputOptions): Promise<WriterRun[]> {
  process.env.METADATA_SERVER_DETECTION = 'none';
  const emulator = await startChildEmulator('spanner', ['--database', DATABASE, '--no-change-streams']);
  const host = emulator.addresses.grpc as string;
  const previous = process.env.SPANNER_EMULATOR_HOST;
  process.env.SPANNER_EMULATOR_HOST = host;
  const spanner = new Spanner({ projectId: PROJECT });
  const [op] = await spanner.instance('bench').database('writer').updateSchema(DDL);
  await op.promise();
  const writer = await startWriter(
    {
      METADATA_SERVER_DETECTION: 'none',
      SPANNER_EMULATOR_HOST: host,
      SLUICE_PROJECT: PROJECT,
      SLUICE_SPANNER_INSTANCE: 'bench',
      SLUICE_SPANNER_DATABASE: 'writer',
      SLUICE_WRITER_DEAD_LETTER_BUCKET: 'bench-dead-letters',
      SLUICE_GCS_ENDPOINT: 'http://127.0.0.1:9',
    },
    o.profileDir,
  );
  const pid = writer.child.pid as number;
  const runs: WriterRun[] = [];
  try {
    let next = 1;
    const take = (n: number) => {
      const from = next;
      next += n;
      return from;
    };
    // Warm-up (unmeasured): the JIT needs a few thousand mutations of each shape on each side.
    for (const shape of ['small', 'wide'] as const) {
      await writerRun(writer.url, pid, shape, take(5000), 5000, o.perRequest);
      await bareRun(spanner, shape, take(5000), 5000, o.perRequest);
    }
    for (let r = 0; r < o.runs; r++)
      for (const shape of ['small', 'wide'] as const) {
        const n = shape === 'small' ? o.small : o.wide;
        runs.push(await writerRun(writer.url, pid, shape, take(n), n, o.perRequest));
        collectGarbage();
        const stop = await profilePhase(o.profileDir, `bare-client-${shape}-${r + 1}`);
        runs.push(await bareRun(spanner, shape, take(n), n, o.perRequest));
        await stop();
      }
  } finally {
    await stopWriter(writer.child, o.profileDir !== undefined);
    spanner.close();
    await emulator.stop();
    if (previous === undefined) delete process.env.SPANNER_EMULATOR_HOST;
    else process.env.SPANNER_EMULATOR_HOST = previous;
  }
  return runs;
}
