/**
 * Enrichment cost: fact rows enriched per CPU-second of this process (the Spanner emulator runs in its own
 * process), with one `as-of-commit` lookup (one read per commit timestamp over its key set) and with one
 * `latest` lookup behind its partial cache, and the cache's hit ratio. The dimension table holds 10,000
 * customers; fact rows come 50 to a commit timestamp, keys drawn with a skew as orders are.
 */
import { Spanner } from '@google-cloud/spanner';
import { SpannerCatalogReader } from '../../shared/adapters/spanner/catalog';
import { SpannerDimensionReader } from '../../shared/adapters/spanner/dimension-reader';
import { Enricher, type FactRow } from '../../shared/app/enrichment/enricher';
import { lookupsSchema, resolveLookups } from '../../shared/domain/enrichment/lookups';
import { addNanos, fromSecondsAndNanos, type Timestamp } from '../../shared/domain/timestamp';
import { startChildEmulator } from './child-emulator';

const PROJECT = 'sluice-bench';
const DATABASE = `projects/${PROJECT}/instances/bench/databases/enrich`;
const CUSTOMERS = 10_000;
const PER_COMMIT = 50;

/** One measured run. */
export interface EnrichmentRun {
  mode: 'as-of-commit' | 'latest';
  rows: number;
  cpuMs: number;
  wallMs: number;
  reads: number;
  hitRatio: number | null;
}

function facts(n: number, at: Timestamp, seed: number): FactRow[] {
  let x = seed;
  const next = () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
  // A skewed draw: a few customers place most orders, as a cache would see them.
  return Array.from({ length: n }, (_, i) => ({
    values: { OrderId: String(i), CustId: String(1 + Math.floor(CUSTOMERS * next() ** 3)) },
    at,
  }));
}

async function seed(spanner: Spanner): Promise<Timestamp> {
  const db = spanner.instance('bench').database('enrich');
  const [op] = await db.updateSchema([
    'CREATE TABLE Customers (CustomerId INT64 NOT NULL, Name STRING(MAX), Segment STRING(MAX)) PRIMARY KEY (CustomerId)',
    'CREATE TABLE Orders (OrderId INT64 NOT NULL, CustId INT64) PRIMARY KEY (OrderId)',
  ]);
  await op.promise();
  let last: Timestamp | undefined;
  for (let from = 1; from <= CUSTOMERS; from += 1000) {
    const rows = Array.from({ length: 1000 }, (_, i) => ({
      CustomerId: String(from + i),
      Name: `customer ${from + i}`,
      Segment: (from + i) % 7 === 0 ? 'enterprise' : 'smb',
    }));
    const [resp] = await db.table('Customers').insert(rows);
    const c = resp.commitTimestamp!;
    last = fromSecondsAndNanos(String(c.seconds), c.nanos ?? 0);
  }
  return last!;
}

async function run(enricher: Enricher, mode: EnrichmentRun['mode'], at: Timestamp, n: number, s: number) {
  const before = enricher.stats();
  const cpu = process.cpuUsage();
  const wall = Date.now();
  for (let i = 0; i < n / PER_COMMIT; i++) {
    // Distinct commit timestamps (nanoseconds after the seed) for as-of-commit; latest ignores them.
    await enricher.enrich(facts(PER_COMMIT, addNanos(at, BigInt(i)), s + i));
  }
  const used = process.cpuUsage(cpu);
  const after = enricher.stats();
  const hits = (after.cache?.hits ?? 0) - (before.cache?.hits ?? 0);
  const misses = (after.cache?.misses ?? 0) - (before.cache?.misses ?? 0);
  return {
    mode,
    rows: n,
    cpuMs: (used.user + used.system) / 1000,
    wallMs: Date.now() - wall,
    reads: after.reads - before.reads,
    hitRatio: after.cache ? hits / Math.max(1, hits + misses) : null,
  };
}

/** Runs `runs` rounds of `rows` fact rows per mode, after a warm-up of each. */
export async function enrichmentThroughput(o: { rows: number; runs: number }): Promise<EnrichmentRun[]> {
  process.env.METADATA_SERVER_DETECTION = 'none';
  const emulator = await startChildEmulator('spanner', ['--database', DATABASE, '--no-change-streams']);
  const previous = process.env.SPANNER_EMULATOR_HOST;
  process.env.SPANNER_EMULATOR_HOST = emulator.addresses.grpc as string;
  const spanner = new Spanner({ projectId: PROJECT });
  try {
    const at = await seed(spanner);
    const db = spanner.instance('bench').database('enrich');
    const catalog = new SpannerCatalogReader(db);
    const reader = new SpannerDimensionReader(db, (t) => catalog.tableSchema(t));
    const fact = await catalog.tableSchema('Orders');
    const dim = await catalog.tableSchema('Customers');
    const enricherOf = (mode: EnrichmentRun['mode']) => {
      const config = lookupsSchema.parse([
        { table: 'Customers', key: { CustomerId: 'CustId' }, columns: ['Name', 'Segment'], mode },
      ]);
      const r = resolveLookups(fact, config, new Map([[dim.name, dim]]));
      if (!r.ok) throw new Error(r.problems.join('; '));
      return new Enricher(r.lookups[0]!, { reader });
    };
    const enrichers = { 'as-of-commit': enricherOf('as-of-commit'), latest: enricherOf('latest') } as const;
    const runs: EnrichmentRun[] = [];
    for (const mode of ['as-of-commit', 'latest'] as const) await run(enrichers[mode], mode, at, 2_000, 1);
    for (let r = 0; r < o.runs; r++)
      for (const mode of ['as-of-commit', 'latest'] as const)
        runs.push(await run(enrichers[mode], mode, at, o.rows, 1000 * (r + 2)));
    return runs;
  } finally {
    spanner.close();
    await emulator.stop();
    if (previous === undefined) delete process.env.SPANNER_EMULATOR_HOST;
    else process.env.SPANNER_EMULATOR_HOST = previous;
  }
}
