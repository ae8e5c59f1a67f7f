/**
 * `npm run capacity`: the capacity model (infra/capacity/) for 1,000 / 10,000 / 50,000 partitions and 6,000 /
 * 60,000 / 200,000 mods per second, beside a measurement of what it assumes per window.
 *
 * The measurement runs the real scheduler and reader use cases over the in-memory ports on a virtual clock
 * (the application harness of the simulator): eight partitions, a commit on every partition each simulated
 * second, ten simulated minutes, a tick a minute. It counts the ledger reads and writes and the task
 * deliveries per window that read data, the list calls per tick and the history streams each partition
 * opened, and prints them next to the model's figures, so a change of the reader that costs another write a
 * window shows in the table instead of hiding in it. Options: `--partitions N --mods M` for one row, `--checkpoint S` for
 * another ledger checkpoint interval than the default 5 s.
 */

import { DATASTREAM_CEILINGS } from '../../infra/capacity/limits';
import {
  DEFAULT_DEPLOYMENT,
  type Deployment,
  type Plan,
  plan,
  WINDOW_OPS,
  type Workload,
} from '../../infra/capacity/model';
import { addMillis } from '../../shared/domain/timestamp';
import { Harness, T0 } from '../app/support/harness';

interface Measured {
  windows: number;
  ledgerWritesPerWindow: number;
  ledgerReadsPerWindow: number;
  listsPerTick: number;
  streamsPerPartitionTable: number;
  tasksPerWindow: number;
}

/** The real reader and scheduler on the virtual clock: what a window that read data costs in calls. */
export async function measureWindowOps(minutes = 10): Promise<Measured> {
  const roots = 8;
  const h = new Harness({
    roots,
    config: { leaseMs: 600_000, window: { maxMs: 600_000, longPollMs: 1_000 } },
  });
  h.settings.quietCheckpointMs = 600_000;
  h.now = addMillis(T0, 1_000);
  await h.tick();
  await h.drain();
  const start = { ...h.memStore.calls, outcomes: h.outcomes.length };
  let ticks = 0;
  let id = 0;
  for (let s = 0; s < minutes * 60; s++) {
    // One commit a second on every slot (the script spreads 16 slots over the partitions).
    for (let slot = 0; slot < 16; slot++)
      h.script.commit(addMillis(h.now, 1 + slot), [{ table: 'Orders', id: id++ * 16 + slot, val: 'v' }]);
    h.advance(1_000);
    if (s % 60 === 0) {
      await h.tick();
      ticks++;
    }
    await h.drain();
  }
  const delivered = h.outcomes.slice(start.outcomes);
  const windows = delivered.filter((o) => o.outcome === 'window').length;
  // A tick writes the status object once and reads the manifest; the rest of the calls are the readers'.
  const writes = h.memStore.calls.write - start.write - ticks;
  const reads = h.memStore.calls.read - start.read;
  const streams = new Set(h.history.created.map((name) => name.split('/streams/')[0])).size;
  return {
    windows,
    ledgerWritesPerWindow: writes / windows,
    ledgerReadsPerWindow: reads / windows,
    listsPerTick: (h.memStore.calls.list - start.list) / ticks,
    streamsPerPartitionTable: h.history.created.length / Math.max(1, streams * roots),
    tasksPerWindow: delivered.length / windows,
  };
}

const WORKLOAD: Omit<Workload, 'partitions' | 'modsPerSecond'> = {
  bytesPerMod: 1_024,
  tablesPerPartition: 1,
  newPartitionsPerHour: 0,
  multiRegion: true,
};

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** One row of the printed table: the default deployment's first limit, then the plan under the settings that pass it. */
export function row(
  partitions: number,
  modsPerSecond: number,
  deployment: Deployment = DEFAULT_DEPLOYMENT,
): { base: Plan; sized: Plan; perPipeline: Plan } {
  const w: Workload = { ...WORKLOAD, partitions, modsPerSecond, newPartitionsPerHour: partitions / 24 };
  const base = plan(w, deployment);
  const sized = plan(w, base.settings);
  // Limits of the project (Storage Write connections): split the tables over that many pipelines, each in
  // its own project. The per-queue limits are passed by queue shards inside one pipeline.
  const shards = Math.max(sized.pipelines, sized.projects);
  if (shards === 1) return { base, sized, perPipeline: sized };
  const part: Workload = {
    ...w,
    partitions: Math.ceil(partitions / shards),
    modsPerSecond: modsPerSecond / shards,
    newPartitionsPerHour: w.newPartitionsPerHour / shards,
  };
  return { base, sized, perPipeline: plan(part, plan(part, deployment).settings) };
}

/** The hard limit the sized plan comes closest to (or passes), with its load. */
function nearestHard(p: Plan): string {
  const [top] = p.demands.filter((d) => d.limit.kind === 'hard').sort((a, b) => b.load - a.load);
  return top ? `${top.limit.what}: ${fmt(top.load * 100)} %` : 'none';
}

function describe(p: Plan): string {
  const first = p.firstLimit;
  return first ? `${first.limit.what} (${fmt(first.needed, 1)} of ${fmt(first.allowed, 1)})` : 'none';
}

export function printTable(
  rows: Array<[number, number]>,
  out: (line: string) => void = console.log,
  deployment: Deployment = DEFAULT_DEPLOYMENT,
): void {
  out(
    '| partitions | mods/s | first limit, default settings | nearest hard limit, sized | reader per pipeline (instances × concurrency, vCPU) | reader queues per pipeline (shards × dispatch/s, concurrent) | checkpoint | pipelines (projects) | lag p50 / p99 | $ / month | $ / GiB |',
  );
  out('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const [partitions, mods] of rows) {
    const { base, sized, perPipeline } = row(partitions, mods, deployment);
    const s = perPipeline.settings;
    const lag =
      perPipeline.lag === 'falls behind'
        ? 'falls behind'
        : `${fmt(perPipeline.lag.p50, 2)} s / ${fmt(perPipeline.lag.p99, 2)} s`;
    const shards = Math.max(sized.pipelines, sized.projects);
    const month = perPipeline.costPerMonth * shards;
    out(
      `| ${fmt(partitions)} | ${fmt(mods)} | ${describe(base)} | ${nearestHard(sized)} | ${fmt(s.reader.maxInstances)} × ${fmt(s.reader.concurrency)}, ${fmt(perPipeline.vcpus, 1)} | ${s.queue.shards} × ${fmt(s.queue.maxDispatchesPerSecond)}, ${fmt(s.queue.maxConcurrentDispatches)} | ${s.checkpointSeconds} s | ${shards} (${sized.projects}) | ${lag} | ${fmt(month)} | ${fmt(month / ((mods * WORKLOAD.bytesPerMod * 2_592_000) / 2 ** 30), 3)} |`,
    );
  }
}

async function main(argv: string[]) {
  const arg = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? Number(argv[i + 1]) : undefined;
  };
  const partitions = arg('--partitions');
  const mods = arg('--mods');
  const checkpoint = arg('--checkpoint');
  for (const [name, v] of [
    ['--partitions', partitions],
    ['--mods', mods],
    ['--checkpoint', checkpoint],
  ] as const)
    if (v !== undefined && !(v > 0)) throw new Error(`${name} takes a positive number`);
  const deployment: Deployment = {
    ...DEFAULT_DEPLOYMENT,
    checkpointSeconds: checkpoint ?? DEFAULT_DEPLOYMENT.checkpointSeconds,
  };
  const rows: Array<[number, number]> =
    partitions !== undefined || mods !== undefined
      ? [[partitions ?? 1_000, mods ?? 6_000]]
      : [1_000, 10_000, 50_000].flatMap((p) =>
          [6_000, 60_000, 200_000].map((m) => [p, m] as [number, number]),
        );
  console.log('Measuring one window of the real reader on the virtual clock (10 simulated minutes)...');
  const m = await measureWindowOps();
  console.log('');
  console.log('| per window that read data | model | measured |');
  console.log('|---|---|---|');
  console.log(`| ledger writes | ${WINDOW_OPS.ledgerWritesPerWindow} | ${fmt(m.ledgerWritesPerWindow, 2)} |`);
  console.log(`| ledger reads | ${WINDOW_OPS.ledgerReadsPerWindow} | ${fmt(m.ledgerReadsPerWindow, 2)} |`);
  console.log(`| task deliveries | ${WINDOW_OPS.taskOpsPerWindow / 2} | ${fmt(m.tasksPerWindow, 2)} |`);
  console.log(
    `| list calls per tick (8 partitions) | 1 per 1,000 partitions + 2 | ${fmt(m.listsPerTick, 2)} |`,
  );
  console.log(
    `| history streams per partition and table (no rotation due) | 1 | ${fmt(m.streamsPerPartitionTable, 2)} |`,
  );
  console.log(`(${fmt(m.windows)} windows measured)`);
  console.log('');
  console.log(
    `Continuous mode; defaults: reader ${DEFAULT_DEPLOYMENT.reader.maxInstances} × ${DEFAULT_DEPLOYMENT.reader.concurrency}, queue ${DEFAULT_DEPLOYMENT.queue.maxDispatchesPerSecond}/s and ${DEFAULT_DEPLOYMENT.queue.maxConcurrentDispatches} at once, long poll ${DEFAULT_DEPLOYMENT.longPollSeconds} s, checkpoint ${deployment.checkpointSeconds} s; ${WORKLOAD.bytesPerMod}-byte mods, one table per partition, a US/EU dataset, partitions renewed once a day.`,
  );
  console.log(
    `Datastream's documented ceilings: ${fmt(DATASTREAM_CEILINGS.partitions)} partitions, ${fmt(DATASTREAM_CEILINGS.modsPerSecond)} mods/s, 60 MiB/s.`,
  );
  console.log('');
  printTable(rows, console.log, deployment);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
}
