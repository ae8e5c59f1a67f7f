/**
 * A value BigQuery cannot hold, on the local stack under `SLUICE_ON_BAD_RECORD=dead-letter`: a PostgreSQL
 * NUMERIC NaN has no BIGNUMERIC value (a permanent UnrepresentableError). Only its record is set aside as a
 * dead letter naming the column; the other records are written and the partition goes on.
 * A later change of the same key supersedes it, and BigQuery ends equal to Spanner.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { Transaction } from '@google-cloud/spanner';
import { Random } from '../../local/random';
import { LOCAL } from '../../local/stack-config';
import { rowValues } from '../../local/values';
import { fromNanos, maxTimestamp } from '../../shared/domain/timestamp';
import { historyCounts, status, until, verdict } from './support/failures';
import { useLocalStack } from './support/local-stack';

interface Listed {
  items: Array<{ id: string; table: string; state: string; reason: string; records: number }>;
  counts: { pending: number; pendingRecords: number; byTable: Record<string, number> };
}

describe('a value BigQuery cannot hold on the local stack, POSTGRESQL', () => {
  const stack = useLocalStack({
    dialect: 'POSTGRESQL',
    churnMs: 0,
    functionEnv: { SLUICE_ON_BAD_RECORD: 'dead-letter' },
  });

  it('is dead-lettered alone, naming its column; the other records and the partition flow', async () => {
    const customers = stack.schema.customers;
    const rng = new Random(5);
    let last = fromNanos(0n);
    const commit = async (write: (tx: Transaction) => void) => {
      last = maxTimestamp(
        last,
        await stack.database.runTransactionAsync(async (tx) => {
          write(tx);
          const [response] = await tx.commit();
          const ts = response.commitTimestamp as { seconds: string | number; nanos: number };
          return fromNanos(BigInt(ts.seconds) * 1_000_000_000n + BigInt(ts.nanos));
        }),
      );
    };
    const row = (id: number, balance?: string) => ({
      ...rowValues(customers, { customer_id: String(id) }, rng),
      ...(balance === undefined ? {} : { balance }),
    });
    expect((await stack.tick()).status).toBe(200);
    stack.startTicking(400);
    await commit((tx) => tx.insert(customers.name, [row(1), row(2)]));
    // A NaN balance between good rows, committed back to back (one window's batch, as a rule).
    for (const [id, balance] of [[3], [4, 'NaN'], [5]] as Array<[number, string?]>)
      await commit((tx) => tx.insert(customers.name, [row(id, balance)]));
    for (let id = 10; id < 16; id++) await commit((tx) => tx.insert(customers.name, [row(id)]));
    expect(await stack.waitForCatchUp(last, 60_000)).toBe(true);
    expect((await status(stack)).partitions.failed).toBe(0);
    const backfill = stack.functions.backfill!.url;
    const listed = (await (await fetch(`${backfill}/dead-letters`)).json()) as Listed;
    expect(listed.counts).toMatchObject({ pending: 1, pendingRecords: 1, byTable: { [customers.name]: 1 } });
    expect(listed.items[0]).toMatchObject({ reason: 'permanent:UnrepresentableError', records: 1 });
    const letter = await stack.emulators.gcs
      .storage()
      .bucket(LOCAL.bucket)
      .file(`${LOCAL.pipeline}/dead-letters/stream/${listed.items[0]!.id}.json`)
      .download();
    const body = JSON.parse(letter[0].toString()) as {
      records: Array<{ error: { column?: string; message: string } }>;
    };
    expect(body.records[0]!.error).toMatchObject({ column: 'balance' });
    expect(body.records[0]!.error.message).toMatch(/NaN has no BigQuery BIGNUMERIC value/);
    // Every other record was written.
    const ids = () =>
      (
        stack.emulators.bigquery.admin.tableRows(LOCAL.dataset, 'customers') as Array<{
          customer_id: unknown;
        }>
      )
        .map((r) => Number(r.customer_id))
        .sort((a, b) => a - b);
    expect(ids()).toEqual([1, 2, 3, 5, 10, 11, 12, 13, 14, 15]);
    // A later change of the key supersedes the dead letter.
    await commit((tx) => tx.update(customers.name, [{ customer_id: '4', balance: '12.5' }]));
    expect(await stack.waitForCatchUp(last, 60_000)).toBe(true);
    await until('the superseding row', async () => (ids().includes(4) ? true : undefined), 30_000);
    await stack.stopTicking();
    expect(await verdict(stack)).toBe(true);
    expect(await historyCounts(stack, 'customers_history')).toEqual({ n: 12, d: 12 });
  }, 120_000);
});
