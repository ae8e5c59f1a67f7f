/**
 * A configured table the database lacks, on the local stack in both dialects: the first tick stops the
 * pipeline with a reason naming the table and the fix (the scheduler's `GET /status` says so, every tick
 * again, nothing is enqueued); once the table is created — the stream watches all tables — the next tick
 * starts the pipeline, and the table's rows and the demo tables' reach BigQuery equal to Spanner.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { createTable, type DemoTable, demoSchema, tablesConfig } from '../../local/demo-schema';
import type { LocalStack } from '../../local/stack';
import { LOCAL, queueName } from '../../local/stack-config';
import type { Dialect } from '../../shared/domain/change-record';
import { fromNanos } from '../../shared/domain/timestamp';
import { useLocalStack } from './support/local-stack';

interface Status {
  state: string;
  reason: string | null;
  partitions: { total: number };
}

async function status(stack: LocalStack): Promise<Status> {
  return (await (await fetch(`${stack.functions.scheduler?.url}/status`)).json()) as Status;
}

function payments(pg: boolean): DemoTable {
  return {
    name: pg ? 'payments' : 'Payments',
    key: [pg ? 'payment_id' : 'PaymentId'],
    columns: [
      { name: pg ? 'payment_id' : 'PaymentId', kind: 'int', nullable: false },
      { name: pg ? 'amount' : 'Amount', kind: 'string', nullable: true },
    ],
    replica: 'payments',
    history: null,
  };
}

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  'a configured table the database lacks, %s',
  (dialect) => {
    const pg = dialect === 'POSTGRESQL';
    const table = payments(pg);

    const tables = { ...tablesConfig(demoSchema(dialect)), [table.name]: { replica: 'payments' } };
    const stack = useLocalStack({
      dialect,
      churnMs: 0,
      functionEnv: { SLUICE_TABLES: JSON.stringify(tables) },
    });

    it('stops with the table and the fix named, then starts once the table exists', async () => {
      const first = await stack.tick();
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ state: 'stopped' });
      const stopped = await status(stack);
      expect(stopped).toMatchObject({ state: 'stopped', partitions: { total: 0 } });
      expect(stopped.reason).toMatch(
        new RegExp(
          `table ${table.name} does not exist in database ${LOCAL.database}: create it, or remove it from SLUICE_TABLES`,
        ),
      );
      // Every tick says so again; nothing is enqueued meanwhile.
      expect((await stack.tick()).body).toMatchObject({ state: 'stopped' });
      expect(stack.emulators.tasks.admin.tasks(queueName('reader'))).toHaveLength(0);

      const [op] = await stack.database.updateSchema([createTable(table, pg)]);
      await op.promise();
      const started = await stack.tick();
      expect(started.body).toMatchObject({ state: 'running' });
      expect((await status(stack)).reason).toBeNull();

      stack.startTicking(500);
      const workload = stack.workload(5);
      for (let i = 0; i < 10; i++) await workload.step();
      const [key, amount] = table.columns.map((c) => c.name) as [string, string];
      const [response] = await stack.database.table(table.name).insert([
        { [key]: '1', [amount]: '12.50' },
        { [key]: '2', [amount]: null },
      ]);
      const ts = (response as { commitTimestamp?: { seconds: string | number; nanos: number } })
        .commitTimestamp;
      const last = ts
        ? fromNanos(BigInt(ts.seconds) * 1_000_000_000n + BigInt(ts.nanos))
        : workload.lastCommit;
      const target =
        workload.lastCommit !== null && last !== null && workload.lastCommit > last
          ? workload.lastCommit
          : last;
      expect(await stack.waitForCatchUp(target!, 60_000)).toBe(true);
      await stack.stopTicking();

      const [rows] = await stack.emulators.bigquery.bigquery().query({
        query: `SELECT ${key} AS k, ${amount} AS a FROM ${LOCAL.dataset}.payments ORDER BY ${key}`,
      });
      expect(rows.map((r: { k: unknown; a: unknown }) => [String(r.k), r.a])).toEqual([
        ['1', '12.50'],
        ['2', null],
      ]);
      const verdict = await stack.verify(workload.journal, { journalComplete: true });
      expect(verdict.equal).toBe(true);
    }, 150_000);
  },
);
