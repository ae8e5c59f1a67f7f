/**
 * Tables in a named schema end to end, in both dialects: the real-data tables exist twice, in the default
 * schema (`RealValues`, explicit entries) and in the named schema `data` (`data.RealValues`, by the
 * all-tables rule to `data__realvalues`), pre-filled and loaded by the start-at-snapshot backfill, then
 * changed by two seeded workloads while replication runs. After catch-up every replica of the four tables
 * equals Spanner row for row, the history holds every committed mod under the qualified Spanner name, and
 * `GET /status` lists `data.RealValues` with its BigQuery tables.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { Random } from '../../local/random';
import { RealDataWorkload, realDataTables } from '../../local/real-data';
import { startLocalStack } from '../../local/stack';
import { LOCAL } from '../../local/stack-config';
import { formatVerdict } from '../../local/verifier';
import type { Dialect } from '../../shared/domain/change-record';
import { catchUpAndStop, loadAtSnapshot } from './support/real-data';

const SEED = Number(process.env.SLUICE_E2E_SEED ?? 1_405);

interface Status {
  tables?: Array<{ source: string; replica: string | null; history: string | null; state: string }>;
}

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])('named schemas, %s', (dialect) => {
  it('backfills and streams sch.T beside a default-schema T of the same name, row for row', async () => {
    const plain = realDataTables(dialect);
    const named = realDataTables(dialect, 'data');
    const stack = await startLocalStack({
      dialect,
      churnMs: 2_000,
      extraTables: [plain.values, plain.keys, named.values, named.keys],
      functionEnv: { SLUICE_START_AT: 'snapshot' },
    });
    try {
      const workloads = [
        new RealDataWorkload(stack.database, dialect, new Random(SEED), plain),
        new RealDataWorkload(stack.database, dialect, new Random(SEED + 1), named),
      ];
      for (const w of workloads) await w.prefill(8);
      await loadAtSnapshot(stack);
      stack.startTicking(400);
      for (let i = 0; i < 25; i++) for (const w of workloads) await w.step();
      const last = workloads
        .map((w) => w.lastCommit)
        .reduce((a, b) => (a === null || (b !== null && b > a) ? b : a));
      await catchUpAndStop(stack, last!);
      const journal = workloads.flatMap((w) => w.journal);
      expect(journal.some((m) => m.table === named.values.name)).toBe(true);
      const result = await stack.verify(journal);
      if (!result.equal) console.error(`seed ${SEED}\n${formatVerdict(result)}`);
      expect(result.equal).toBe(true);
      for (const t of [plain.values, plain.keys, named.values, named.keys])
        expect(result.replicas.find((r) => r.source === t.name)?.spannerRows).toBeGreaterThan(0);
      // The two tables of one base name land in two BigQuery tables, and the history keeps the Spanner name.
      const bq = stack.emulators.bigquery.admin;
      const namedHistory = bq.tableRows(LOCAL.dataset, named.values.history!);
      expect(namedHistory.length).toBeGreaterThan(0);
      expect(new Set(namedHistory.map((r) => r['table_name']))).toEqual(new Set([named.values.name]));
      expect(bq.tableRows(LOCAL.dataset, named.values.replica!).length).toBe(
        result.replicas.find((r) => r.source === named.values.name)?.spannerRows,
      );
      const status = (await (await fetch(`${stack.functions.scheduler?.url}/status`)).json()) as Status;
      expect(status.tables?.find((t) => t.source === named.values.name)).toEqual(
        expect.objectContaining({
          replica: `data__${plain.values.name.toLowerCase()}`,
          history: `data__${plain.values.name.toLowerCase()}_history`,
          state: 'replicating',
        }),
      );
    } finally {
      await stack.stop();
    }
  }, 360_000);
});
