/**
 * The capacity model (infra/capacity/): its per-window counts against the real reader on the virtual clock,
 * and the limits it names as a pipeline grows.
 */
import { LIMITS } from '../../infra/capacity/limits';
import { DEFAULT_DEPLOYMENT, plan, WINDOW_OPS, type Workload } from '../../infra/capacity/model';
import { measureWindowOps, printTable } from '../bench/capacity';

const w = (partitions: number, modsPerSecond: number, more: Partial<Workload> = {}): Workload => ({
  partitions,
  modsPerSecond,
  bytesPerMod: 1_024,
  tablesPerPartition: 1,
  newPartitionsPerHour: 0,
  multiRegion: true,
  ...more,
});

describe('capacity model', () => {
  it('counts per window what the real reader does on the virtual clock', async () => {
    const m = await measureWindowOps(3);
    expect(m.windows).toBeGreaterThan(100);
    // A reader change that costs another ledger call a window must show here, and then in the model.
    expect(Math.abs(m.ledgerWritesPerWindow - WINDOW_OPS.ledgerWritesPerWindow)).toBeLessThan(0.25);
    expect(Math.abs(m.ledgerReadsPerWindow - WINDOW_OPS.ledgerReadsPerWindow)).toBeLessThan(0.5);
    expect(m.tasksPerWindow).toBeCloseTo(WINDOW_OPS.taskOpsPerWindow / 2, 1);
    expect(m.streamsPerPartitionTable).toBe(1);
  }, 60_000);

  it('the default deployment holds one window per partition up to its 320 requests, and names the setting after', () => {
    const fits = plan(w(320, 1_000));
    expect(fits.firstLimit).toBeUndefined();
    expect(fits.lag).not.toBe('falls behind');
    const over = plan(w(321, 1_000));
    expect(over.lag).toBe('falls behind');
    expect(over.firstLimit?.limit.kind).toBe('setting');
    expect(over.firstLimit?.limit.what).toMatch(/reader requests at once/);
    // The settings it proposes pass it.
    const sized = plan(w(321, 1_000), over.settings);
    expect(sized.demands.filter((d) => d.limit.kind === 'setting' && d.load > 1)).toEqual([]);
    expect(sized.lag).not.toBe('falls behind');
  });

  it('sizes instances by CPU: more mods need more vCPUs, and the lag grows with utilisation', () => {
    const light = plan(w(1_000, 6_000), plan(w(1_000, 6_000)).settings);
    const heavy = plan(w(1_000, 200_000), plan(w(1_000, 200_000)).settings);
    expect(heavy.vcpus).toBeGreaterThan(10 * light.vcpus);
    expect(heavy.instances).toBeGreaterThan(light.instances);
    if (light.lag === 'falls behind' || heavy.lag === 'falls behind') throw new Error('sized plans keep up');
    expect(heavy.lag.p99).toBeGreaterThan(light.lag.p99);
  });

  it('a queue holds at most 5,000 windows at once: 10,000 partitions need two reader queue shards', () => {
    const one = plan(w(10_000, 60_000), {
      ...plan(w(10_000, 60_000)).settings,
      queue: { ...DEFAULT_DEPLOYMENT.queue, maxConcurrentDispatches: 5_000 },
    });
    expect(one.demands.find((d) => d.limit === LIMITS.concurrentDispatches)?.load).toBe(2);
    expect(one.lag).toBe('falls behind');
    const sized = plan(w(10_000, 60_000), plan(w(10_000, 60_000)).settings);
    expect(sized.settings.queue.shards).toBe(2);
    expect(sized.demands.find((d) => d.limit === LIMITS.concurrentDispatches)?.load).toBe(1);
    expect(sized.lag).not.toBe('falls behind');
    expect(sized.pipelines).toBe(1);
    expect(sized.projects).toBe(1);
  });

  it('connections are the project’s: 50,000 partitions writing two tables need ten projects in a multi-region', () => {
    const p = plan(w(50_000, 60_000, { tablesPerPartition: 2 }));
    const connections = p.demands.find((d) => d.limit === LIMITS.connectionsMultiRegion);
    expect(connections?.needed).toBe(200_000);
    expect(p.projects).toBe(10);
    const regional = plan(w(50_000, 60_000, { tablesPerPartition: 2, multiRegion: false }));
    expect(regional.projects).toBe(40);
  });

  it('stretches the checkpoint so the ledger bucket stays under its first write rate', () => {
    const p = plan(w(10_000, 6_000));
    expect(p.demands.find((d) => d.limit === LIMITS.bucketWritesPerSecond)?.load).toBeGreaterThan(1);
    const sized = plan(w(10_000, 6_000), p.settings);
    expect(sized.settings.checkpointSeconds).toBeGreaterThan(DEFAULT_DEPLOYMENT.checkpointSeconds);
    expect(sized.demands.find((d) => d.limit === LIMITS.bucketWritesPerSecond)?.load).toBeLessThan(1);
  });

  it('counts CreateWriteStream calls from rotation and new partitions against the hourly quota', () => {
    const p = plan(w(10_000, 6_000, { newPartitionsPerHour: 9_000 }));
    const streams = p.demands.find((d) => d.limit === LIMITS.createStreamsPerHour);
    expect(streams?.needed).toBeCloseTo(10_000 / 24 + 9_000, 5);
    expect(streams?.load).toBeGreaterThan(0.9);
  });

  it('prints one row a workload, every column filled', () => {
    const lines: string[] = [];
    printTable(
      [
        [1_000, 6_000],
        [50_000, 200_000],
      ],
      (l) => lines.push(l),
    );
    expect(lines).toHaveLength(4);
    for (const line of lines.slice(2)) {
      expect(line.split('|').filter((c) => c.trim() === '')).toHaveLength(2);
      expect(line).not.toMatch(/NaN|undefined|Infinity/);
    }
    expect(lines[3]).toMatch(/\| 2 × 100, 5,000 \|.*\| 5 \(5\) \|/);
  });
});
