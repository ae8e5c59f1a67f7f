/**
 * `npm run bench`: the benchmarks of DESIGN §8 on the local emulators, each figure the median of several runs,
 * printed as one table with the machine it ran on. Not part of `npm test` (figures on a shared machine vary;
 * they are recorded in docs/performance.md, never asserted). `--quick` runs fewer rounds.
 */
import { parseConfigObject } from '../../shared/domain/config';
import { type BackfillRun, backfillThroughput } from './backfill-throughput';
import { type EnrichmentRun, enrichmentThroughput } from './enrichment';
import { latencyFigures, loadedLatencyFigures } from './latency-figures';
import { readerFunctionThroughput } from './reader-function';
import { readerThroughput, type ThroughputRun } from './reader-throughput';
import { schedulerTicks } from './scheduler-tick';
import { type Figure, fmt, machine, median, spread, table } from './stats';
import { type WriterRun, writerThroughput } from './writer-throughput';

const quick = process.argv.includes('--quick');
/**
 * `--only writer` (or `throughput`, `reader-function`, `backfill`, `reader`, `enrichment`, `reader-enrichment`,
 * `latency`, `latency-load`) runs that benchmark
 * alone.
 */
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
/** `--profile <dir>`: CPU profiles of the measured phases (backfill, writer, reader variants) written there. */
const profileDir = process.argv.includes('--profile')
  ? process.argv[process.argv.indexOf('--profile') + 1]
  : undefined;
const RUNS = quick ? 1 : 3;
/** Rounds of the reader variants whose ratios are goals: enough that two runs of the benchmark agree. */
const RATIO_ROUNDS = quick ? 1 : 5;

function progress(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

/**
 * The ratio `numerator / denominator` of mods per CPU-second, taken within each round (the two runs of a round
 * follow each other, so the machine's load is shared) and summed up over the rounds: median and range.
 */
function pairedRatio(runs: ThroughputRun[], numerator: string, denominator: string) {
  const rate = (r: ThroughputRun) => r.mods / (r.cpuMs / 1000);
  const ratios: number[] = [];
  for (const n of runs.filter((r) => r.variant === numerator)) {
    const d = runs.find((r) => r.variant === denominator && r.round === n.round);
    if (d) ratios.push(rate(n) / rate(d));
  }
  return { ...spread(ratios), rounds: ratios.length };
}

/** A ratio figure of {@link pairedRatio}. */
function ratioFigure(
  runs: ThroughputRun[],
  what: string,
  numerator: string,
  denominator: string,
  goal: number,
): Figure {
  const r = pairedRatio(runs, numerator, denominator);
  return {
    what,
    value: fmt(r.median, 2),
    target: `≥ ${goal}`,
    note: `median of ${r.rounds} rounds; range ${fmt(r.min, 2)}–${fmt(r.max, 2)}`,
  };
}

function throughputFigures(runs: ThroughputRun[]): Figure[] {
  const variants = [...new Set(runs.map((r) => r.variant))].filter((v) => v !== 'warm-up');
  const rate = (v: string) =>
    median(runs.filter((r) => r.variant === v).map((r) => r.mods / (r.cpuMs / 1000)));
  const wall = (v: string) =>
    median(runs.filter((r) => r.variant === v).map((r) => r.mods / (r.wallMs / 1000)));
  const base = rate('memory → memory');
  const figures: Figure[] = variants.map((v) => ({
    what: `reader mods / CPU-s, ${v}`,
    value: fmt(rate(v)),
    target: v === 'emulators' ? '≥ 20,000' : '',
    note: `${runs.filter((r) => r.variant === v).length} runs; ${fmt(wall(v))} mods/s wall; ${fmt(base / rate(v), 2)}× the in-process time`,
  }));
  figures.push(
    ratioFigure(runs, 'reader full path / in-process', 'emulators', 'memory → memory', 0.8),
    ratioFigure(
      runs,
      'reader read at commit / full path',
      'emulators, read at commit (NEW_VALUES)',
      'emulators',
      0.6,
    ),
    ratioFigure(
      runs,
      'history exactly once / at least once, full path',
      'emulators',
      'emulators, at-least-once history',
      0.9,
    ),
  );
  const full = runs.filter((r) => r.variant === 'emulators');
  figures.push({
    what: `reader memory peak, window of ${fmt(full[0]?.mods ?? 0)} mods`,
    value: `${fmt(median(full.map((r) => r.heapPeakMiB)))} MiB heap`,
    target: '',
    // The RSS above the run's start is 0 when earlier runs left the process larger than this one needs: the
    // process's peak is the figure that always says something.
    note: `RSS +${fmt(median(full.map((r) => r.rssPeakMiB)))} MiB above the run's start; process peak ${fmt(median(full.map((r) => r.rssMaxMiB)))} MiB`,
  });
  return figures;
}

/**
 * CreateWriteStream calls a day (ADR-1601): one stream per partition and history table, replaced daily by
 * age, plus one for each new partition (split or merge) that writes history. Partitions are taken to live an
 * hour on average — Spanner splits and merges by load; a quiet database churns far less.
 */
function streamFigure(): Figure {
  const partitions = 50;
  const historyTables = 1;
  const rotationsPerDay = 86_400_000 / parseConfigObject(BENCH_CONFIG).history.streamMaxAgeMs;
  const newPartitionsPerDay = partitions * 24;
  const perDay = historyTables * (partitions * rotationsPerDay + newPartitionsPerDay);
  const quotaPerDay = 10_000 * 24;
  return {
    what: 'history write streams created a day, 50 partitions',
    value: fmt(perDay),
    target: `quota ${fmt(quotaPerDay)} / day`,
    note: `${fmt((100 * perDay) / quotaPerDay, 1)} % of the CreateWriteStream quota; 1 history table, partitions living 1 h, daily rotation`,
  };
}

const BENCH_CONFIG = {
  project: 'sluice-bench',
  spanner: { instance: 'bench', database: 'bench', stream: 'Changes' },
  bigquery: { dataset: 'bench' },
  ledger: { bucket: 'bench' },
  tables: { Items: { history: 'items_history' } },
};

async function schedulerFigures(): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const n of [1_000, 10_000]) {
    progress(`scheduler tick, ${n} partitions`);
    const runs = await schedulerTicks(n, RUNS);
    figures.push({
      what: `scheduler tick, ${fmt(n)} partitions`,
      value: `${fmt(median(runs.map((r) => r.ms)))} ms`,
      target: n === 10_000 ? '≤ 5 s' : '',
      note: `${runs.length} ticks; ${median(runs.map((r) => r.listCalls))} list calls + ${median(runs.map((r) => r.otherCalls))} other GCS calls`,
    });
  }
  return figures;
}

/** What each shape's writer / bare-client ratio must reach (issue goals, docs/performance.md). */
const WRITER_GOALS = { small: 0.8, wide: 0.85 } as const;

async function writerFigures(): Promise<Figure[]> {
  const runs = quick ? 1 : 5;
  progress(`writer throughput (${runs} runs per shape)`);
  const all: WriterRun[] = await writerThroughput({
    runs,
    small: 40_000,
    wide: 15_000,
    perRequest: 500,
    ...(profileDir ? { profileDir } : {}),
  });
  const of = (v: WriterRun['variant'], shape: WriterRun['shape']) =>
    all.filter((r) => r.variant === v && r.shape === shape);
  const cpuRate = (r: WriterRun) => r.mutations / (r.cpuMs / 1000);
  const wallRate = (rs: WriterRun[]) => median(rs.map((r) => r.mutations / (r.wallMs / 1000)));
  return (['small', 'wide'] as const).flatMap((shape) => {
    const writer = of('writer', shape);
    const bare = of('bare client', shape);
    // Each writer run is paired with the bare-client run right after it: the ratio of a pair holds whatever
    // the machine's load was in those seconds, and the spread of the pairs says how far one run can be trusted.
    const ratios = spread(writer.map((w, i) => cpuRate(w) / cpuRate(bare[i] as WriterRun)));
    return [
      {
        what: `writer mutations / CPU-s, ${shape} rows`,
        value: fmt(median(writer.map(cpuRate))),
        target: '',
        note: `${writer.length} runs of ${fmt(writer[0]?.mutations ?? 0)}; ${fmt(wallRate(writer))} mutations/s wall (emulator-bound); bare client ${fmt(median(bare.map(cpuRate)))} / CPU-s, ${fmt(wallRate(bare))}/s wall`,
      },
      {
        what: `writer / bare client, ${shape} rows`,
        value: fmt(ratios.median, 2),
        target: `≥ ${WRITER_GOALS[shape]}`,
        note: `median of ${writer.length} paired runs; range ${fmt(ratios.min, 2)}–${fmt(ratios.max, 2)}`,
      },
    ];
  });
}

/** The reader's full path with large values and with large transactions, next to the standard window. */
async function readerShapeFigures(): Promise<Figure[]> {
  const shapes = [
    { what: '50-mod transactions, 40-byte strings', mods: 20_000, modsPerTransaction: 50, noteBytes: 40 },
    { what: '10 KiB strings', mods: 5_000, modsPerTransaction: 50, noteBytes: 10 * 1024 },
    { what: '1,000-mod transactions', mods: 20_000, modsPerTransaction: 1_000, noteBytes: 40 },
  ];
  const figures: Figure[] = [];
  for (const shape of shapes) {
    progress(`reader throughput, ${shape.what} (${RUNS} runs)`);
    const runs = await readerThroughput({ ...shape, runs: RUNS, only: ['emulators'] });
    const full = runs.filter((r) => r.variant === 'emulators');
    figures.push({
      what: `reader mods / CPU-s, emulators (full path), ${shape.what}`,
      value: fmt(median(full.map((r) => r.mods / (r.cpuMs / 1000)))),
      target: '',
      note: `${full.length} runs of ${fmt(shape.mods)} mods; ${fmt(median(full.map((r) => r.mods / (r.wallMs / 1000))))} mods/s wall; heap +${fmt(median(full.map((r) => r.heapPeakMiB)))} MiB`,
    });
  }
  return figures;
}

/** Backfill of a wide table of every type, against the bare client reading the same partitions. */
async function backfillFigures(): Promise<Figure[]> {
  const rows = quick ? 100_000 : 1_000_000;
  const count = quick ? 1 : 2;
  progress(`backfill of ${fmt(rows)} rows (${count} runs; loading takes a while)`);
  const runs: BackfillRun[] = await backfillThroughput({
    rows,
    runs: count,
    concurrency: 4,
    partitionBytes: 4 * 1024 * 1024,
    progress,
    ...(profileDir ? { profileDir } : {}),
  });
  const rate = (r: BackfillRun) => r.rows / (r.cpuMs / 1000);
  const ceiling = (r: BackfillRun) => r.rows / (r.ceilingCpuMs / 1000);
  return [
    {
      what: `backfill rows / CPU-s, ${fmt(rows)} rows of every type (replica)`,
      value: fmt(median(runs.map(rate))),
      target: '≥ 0.7 of the bare client',
      note: `${fmt(median(runs.map((r) => rate(r) / ceiling(r))), 2)} of the bare client's ${fmt(median(runs.map(ceiling)))} / CPU-s; ${runs.length} runs, ${runs[0]?.partitions} partitions, 4 at once`,
    },
    {
      what: `backfill of ${fmt(rows)} rows: wall time, peak memory`,
      value: `${fmt(median(runs.map((r) => r.wallMs / 1000)), 1)} s, ${fmt(median(runs.map((r) => r.rssMaxMiB)))} MiB RSS`,
      target: '1,000,000 rows, bounded memory',
      note: `${fmt(median(runs.map((r) => r.rowsPerSecond ?? 0)))} rows/s; heap +${fmt(median(runs.map((r) => r.heapPeakMiB)))} MiB during the run; bare client ${fmt(median(runs.map((r) => r.ceilingWallMs / 1000)), 1)} s`,
    },
  ];
}

/** The reader's enrichment path: one as-of-commit lookup and one cached latest lookup. */
async function enrichmentFigures(): Promise<Figure[]> {
  progress(`enrichment throughput (${RUNS} runs per mode)`);
  const runs: EnrichmentRun[] = await enrichmentThroughput({ rows: 10_000, runs: RUNS });
  return (['as-of-commit', 'latest'] as const).map((mode) => {
    const rs = runs.filter((r) => r.mode === mode);
    const rate = median(rs.map((r) => r.rows / (r.cpuMs / 1000)));
    const wall = median(rs.map((r) => r.rows / (r.wallMs / 1000)));
    const hits = rs[0]?.hitRatio;
    const reads = median(rs.map((r) => r.reads));
    return {
      what: `enriched rows / CPU-s, one ${mode} lookup`,
      value: fmt(rate),
      target: '',
      note: `${rs.length} runs of ${fmt(rs[0]?.rows ?? 0)} rows, 50 per commit; ${fmt(wall)} rows/s wall; ${fmt(reads)} reads per run${hits === null || hits === undefined ? '' : `; cache hit ratio ${fmt(median(rs.map((r) => r.hitRatio ?? 0)), 3)}`}`,
    };
  });
}

/** The reader's full path with one as-of-commit and one latest lookup, next to the plain reader. */
async function readerEnrichmentFigures(): Promise<Figure[]> {
  const variants = ['emulators', 'emulators, one as-of-commit lookup', 'emulators, one latest lookup'];
  progress(`reader throughput with lookups (${RATIO_ROUNDS} runs per variant)`);
  const runs = await readerThroughput({
    mods: 20_000,
    modsPerTransaction: 50,
    runs: RATIO_ROUNDS,
    only: variants,
    ...(profileDir ? { profileDir } : {}),
  });
  const rate = (v: string) =>
    median(runs.filter((r) => r.variant === v).map((r) => r.mods / (r.cpuMs / 1000)));
  const plain = rate('emulators');
  const figures = variants.map((v) => {
    const rs = runs.filter((r) => r.variant === v);
    return {
      what: `reader mods / CPU-s, ${v === 'emulators' ? 'no lookup' : v.replace('emulators, ', '')}`,
      value: fmt(rate(v)),
      target: '',
      note: `${rs.length} runs of ${fmt(rs[0]?.mods ?? 0)} mods, 50 per commit; ${fmt(rate(v) / plain, 2)} of the plain reader; ${fmt(median(rs.map((r) => r.mods / (r.wallMs / 1000))))} mods/s wall`,
    };
  });
  return [
    ...figures,
    ratioFigure(runs, 'reader with one as-of-commit lookup / plain', variants[1] as string, 'emulators', 0.6),
  ];
}

/** The reader function's own process on the local stack, Cloud Tasks deliveries and all. */
async function readerFunctionFigures(): Promise<Figure[]> {
  const rows = 20_000;
  progress(`reader function on the local stack (${RUNS} runs of ${fmt(rows)} rows)`);
  const runs = await readerFunctionThroughput({ rows, runs: RUNS });
  const rates = spread(runs.map((r) => r.mods / (r.cpuMs / 1000)));
  return [
    {
      what: 'reader function mods / CPU-s, local stack (its process)',
      value: fmt(rates.median),
      target: '',
      note: `${runs.length} runs of ${fmt(rows)} rows, 50 per commit; range ${fmt(rates.min)}–${fmt(rates.max)}; ${fmt(median(runs.map((r) => r.mods / (r.wallMs / 1000))))} mods/s wall`,
    },
  ];
}

/** The reader's standard window through every variant: in-process, full path, at least once, read at commit. */
async function readerVariantFigures(): Promise<Figure[]> {
  progress(`reader throughput (${RATIO_ROUNDS} runs per variant)`);
  const runs = await readerThroughput({
    mods: 40_000,
    modsPerTransaction: 50,
    runs: RATIO_ROUNDS,
    ...(profileDir ? { profileDir } : {}),
  });
  return [...throughputFigures(runs), streamFigure()];
}

async function main(): Promise<void> {
  const started = Date.now();
  const alone: Record<string, () => Promise<Figure[]>> = {
    throughput: readerVariantFigures,
    'reader-function': readerFunctionFigures,
    writer: writerFigures,
    backfill: backfillFigures,
    reader: readerShapeFigures,
    enrichment: enrichmentFigures,
    'reader-enrichment': readerEnrichmentFigures,
    latency: () => latencyFigures({ runs: RUNS, quick, progress }),
    'latency-load': () => loadedLatencyFigures({ runs: RUNS, quick, progress }),
  };
  const one = only ? alone[only] : undefined;
  if (one) {
    console.log(`sluice benchmarks — ${machine()}`);
    console.log(table(await one()));
    return;
  }
  const figures = [
    ...(await readerVariantFigures()),
    ...(await readerShapeFigures()),
    ...(await readerFunctionFigures()),
    ...(await backfillFigures()),
    ...(await writerFigures()),
    ...(await enrichmentFigures()),
    ...(await readerEnrichmentFigures()),
    ...(await schedulerFigures()),
    ...(await latencyFigures({ runs: RUNS, quick, progress })),
  ];
  console.log(`sluice benchmarks — ${machine()}`);
  console.log(table(figures));
  console.log(`(${fmt((Date.now() - started) / 1000)} s in all)`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
