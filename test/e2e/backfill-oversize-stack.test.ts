/**
 * A snapshot row whose history row no AppendRows request can carry, on the local stack, both dialects
 * (ADR-2114). The pipeline starts with `startAt: "snapshot"` under `SLUICE_ON_BAD_RECORD=dead-letter` on a
 * customer whose name and email are control characters: a few MB in Spanner and in the replica, six bytes
 * each in the history row's JSON, so its request is over 20 MB and the BigQuery emulator refuses it as the
 * service does (`AppendRows request too large`, bigquery-storage-write.md §2.5). The backfill succeeds, the
 * row's history is set aside as a dead letter that `GET /dead-letters` lists with its key, column and
 * snapshot timestamp, the other rows' history is written once, and a replay applies it like a stream letter.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { Random } from '../../local/random';
import { rowValues } from '../../local/values';
import type { Dialect } from '../../shared/domain/change-record';
import { historyCounts, status, until, verdict } from './support/failures';
import { useLocalStack } from './support/local-stack';

/** 2,000,000 characters (under Spanner's 2,621,440 a STRING cell), 12 MB of history JSON. */
const HEAVY = '\u0001'.repeat(2_000_000);

interface Listed {
  items: Array<{ table: string; state: string; reason: string; key?: string; column?: string }>;
  counts: { pending: number };
}

async function post(url: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

interface JobView {
  state: string;
  error: string | null;
  snapshotTimestamp: string;
}

/** The job's view once it succeeded or failed. */
function awaitJob(backfill: string, id: string): Promise<JobView> {
  return until(
    `backfill ${id} to end`,
    async () => {
      const view = (await (await fetch(`${backfill}/backfills/${id}`)).json()) as JobView;
      return ['succeeded', 'failed'].includes(view.state) ? view : undefined;
    },
    40_000,
  );
}

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  'a backfill row too large for the history on the local stack, %s',
  (dialect) => {
    const stack = useLocalStack({
      dialect,
      churnMs: 0,
      functionEnv: { SLUICE_START_AT: 'snapshot', SLUICE_ON_BAD_RECORD: 'dead-letter' },
    });

    it('is dead-lettered with its key, column and snapshot timestamp; the rest of the backfill is written once', async () => {
      const backfill = stack.functions.backfill!.url;
      const customers = stack.schema.customers;
      const rng = new Random(3);
      const rows = [1, 2, 3].map((id) => ({
        ...rowValues(customers, { customer_id: String(id) }, rng),
        ...(id === 2 ? { name: HEAVY, email: HEAVY } : {}),
      }));
      await stack.database.table(customers.name).insert(rows);
      expect((await stack.tick()).status).toBe(200);
      // The pipeline's own start loads the replicas only; a backfill of customers loads its history too.
      await awaitJob(backfill, 'start-at-snapshot');
      const posted = await post(`${backfill}/backfills`, { tables: [customers.name] });
      expect(posted.status).toBe(202);
      const job = await awaitJob(backfill, String(posted.body.id));
      expect([job.state, job.error]).toEqual(['succeeded', null]);
      const listed = (await (await fetch(`${backfill}/dead-letters`)).json()) as Listed;
      expect(listed.counts.pending).toBe(1);
      expect(listed.items).toEqual([
        expect.objectContaining({
          table: customers.name,
          state: 'pending',
          reason: 'permanent:UnrepresentableError',
          key: '{"customer_id":"2"}',
          column: expect.stringMatching(/^(name|email)$/),
          commitTimestamp: job.snapshotTimestamp,
          message: expect.stringMatching(/AppendRows request may carry/),
        }),
      ]);
      expect(await historyCounts(stack, 'customers_history')).toEqual({ n: 2, d: 2 });
      // The status (written by the scheduler's next tick) counts it with the stream's letters.
      expect((await stack.tick()).status).toBe(200);
      const seen = (await status(stack)) as unknown as { deadLetters: Record<string, unknown> };
      expect(seen.deadLetters).toMatchObject({ pending: 1, byTable: { [customers.name]: 1 } });
      // The letter replays like a stream letter: its row is read at the snapshot timestamp into the replica.
      expect(await post(`${backfill}/dead-letters/replay`)).toMatchObject({
        status: 200,
        body: { replayed: 1, failed: 0 },
      });
      expect(await verdict(stack)).toBe(true);
    }, 120_000);
  },
);
