/**
 * The latency figures of `npm run bench`: commit → BigQuery on the local stack, idle in both modes and in
 * continuous mode at 1,000 commits a second.
 */
import { endToEndLatency, latencyUnderLoad } from './latency';
import { type Figure, fmt, median, percentile } from './stats';

/** How many rounds, whether the run is `--quick`, and where progress lines go. */
export interface LatencyOptions {
  runs: number;
  quick: boolean;
  progress: (message: string) => void;
}

export async function latencyFigures(o: LatencyOptions): Promise<Figure[]> {
  const { progress } = o;
  const figures: Figure[] = [];
  for (const mode of ['continuous', 'scheduled'] as const) {
    progress(`end-to-end latency, ${mode} mode`);
    const samples = mode === 'continuous' ? 25 : 10;
    // A scheduled round waits out the idle delay (30 s by default): fewer rounds keep the run short.
    const count = mode === 'continuous' ? o.runs : Math.min(o.runs, 2);
    const rounds = await endToEndLatency({ mode, rounds: count, samples, everyMs: 200 });
    const p50 = median(rounds.map((r) => percentile(r, 0.5)));
    const p99 = median(rounds.map((r) => percentile(r, 0.99)));
    const target = mode === 'continuous' ? '≤ 2 s / ≤ 5 s' : '— (tick-bound)';
    const note = `${rounds.length} rounds × ${samples} commits; tick 2 s`;
    figures.push({
      what: `latency commit → BigQuery, ${mode}, p50 / p99`,
      value: `${fmt(p50 / 1000, 2)} s / ${fmt(p99 / 1000, 2)} s`,
      target,
      note,
    });
  }
  figures.push(...(await loadedLatencyFigures(o)));
  return figures;
}

/** Continuous mode while commits arrive at 1,000 a second (the performance issue's load point). */
export async function loadedLatencyFigures(o: LatencyOptions): Promise<Figure[]> {
  const { progress, quick } = o;
  const perSecond = 1_000;
  progress(`end-to-end latency at ${perSecond} commits per second, continuous mode`);
  const rounds = await latencyUnderLoad({ perSecond, seconds: quick ? 5 : 10, rounds: quick ? 1 : 2 });
  const p50 = median(rounds.map((r) => percentile(r.latencies, 0.5)));
  const p99 = median(rounds.map((r) => percentile(r.latencies, 0.99)));
  const reached = median(rounds.map((r) => r.reached));
  const failed = rounds.reduce((n, r) => n + r.failed, 0);
  return [
    {
      what: `latency commit → BigQuery, continuous, ${fmt(perSecond)} commits/s asked, p50 / p99`,
      value: `${fmt(p50 / 1000, 2)} s / ${fmt(p99 / 1000, 2)} s`,
      target: '≤ 2 s / ≤ 5 s',
      note: `${rounds.length} rounds × ${rounds[0]?.latencies.length ?? 0} commits; ${fmt(reached)} commits/s reached; ${failed} failed`,
    },
  ];
}
