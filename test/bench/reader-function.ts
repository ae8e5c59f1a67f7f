/**
 * The reader function's own CPU per mod on the local stack (`startLocalStack`, the stack `npm start` runs):
 * the reader runs as its own process through the functions framework, from the same bundle, and reads its
 * windows from Cloud Tasks deliveries as in production. Rows are committed in transactions of 50 through the
 * official client; a run ends when the BigQuery replica holds them all. The reader process's CPU time is read
 * from the kernel (`/proc/<pid>/stat`), so the figure holds the framework, HTTP, the ledger and the task
 * answers as well as the window itself: what a Cloud Run instance spends.
 */
import { readFileSync } from 'node:fs';
import { Random } from '../../local/random';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { LOCAL } from '../../local/stack-config';
import { rowValues } from '../../local/values';

/** One measured run. */
export interface ReaderFunctionRun {
  mods: number;
  cpuMs: number;
  wallMs: number;
}

/** CPU time of a process in ms, from /proc (user + system; clock ticks of 10 ms). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function until(what: string, condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function run(stack: LocalStack, firstId: number, rows: number): Promise<ReaderFunctionRun> {
  const pid = stack.functions?.reader?.pid;
  if (pid === undefined) throw new Error('the reader function is not running');
  const table = stack.schema.customers;
  const replica = table.replica ?? '';
  const visible = () => stack.emulators.bigquery.admin.tableRows(LOCAL.dataset, replica).length;
  const before = visible();
  const rng = new Random(firstId);
  const cpu = processCpuMs(pid);
  const wall = performance.now();
  for (let i = 0; i < rows; i += 50) {
    const batch = Array.from({ length: Math.min(50, rows - i) }, (_, k) =>
      rowValues(table, { customer_id: String(firstId + i + k) }, rng),
    );
    await stack.database.table(table.name).insert(batch);
  }
  await until(`the replica did not reach ${before + rows} rows`, () => visible() >= before + rows, 300_000);
  if (stack.functions?.reader?.pid !== pid) throw new Error('the reader process restarted during the run');
  return { mods: rows, cpuMs: processCpuMs(pid) - cpu, wallMs: performance.now() - wall };
}

/** Options of {@link readerFunctionThroughput}. */
export interface ReaderFunctionOptions {
  rows: number;
  runs: number;
}

/** One warm-up run of 2,000 rows, then `runs` measured runs of `rows`, in one stack. */
export async function readerFunctionThroughput(o: ReaderFunctionOptions): Promise<ReaderFunctionRun[]> {
  const stack = await startLocalStack({ mode: 'continuous', churnMs: 0 });
  try {
    stack.startTicking(2_000);
    await until('the pipeline did not start', () => stack.progress().watermark !== null, 60_000);
    let next = 10_000_000;
    await run(stack, next, 2_000);
    next += 2_000;
    const runs: ReaderFunctionRun[] = [];
    for (let r = 0; r < o.runs; r++) {
      runs.push(await run(stack, next, o.rows));
      next += o.rows;
    }
    return runs;
  } finally {
    await stack.stop();
  }
}
