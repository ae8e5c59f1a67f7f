/**
 * A poison record on the local stack, both dialects: the customers replica table was made by hand with
 * `email` REQUIRED while Spanner allows NULL, so BigQuery rejects the row of a customer without an email.
 * Under the default policy its partition fails (the status names table, column and key), the other partition
 * keeps flowing; after the column is relaxed, `POST /partitions/retry` on the backfill function brings the
 * partition back and BigQuery equals Spanner, with every history row written exactly once.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { Random } from '../../local/random';
import type { LocalStack } from '../../local/stack';
import { LOCAL } from '../../local/stack-config';
import { rowValues } from '../../local/values';
import type { Dialect } from '../../shared/domain/change-record';
import { keyHash } from '../../shared/domain/log-values';
import { fromNanos, maxTimestamp } from '../../shared/domain/timestamp';
import { operatorPost, tickEvery400ms, verdict } from './support/failures';
import { useLocalStack } from './support/local-stack';
import { handMadeReplica } from './support/strict-replica';

interface Status {
  partitions: { failed: number };
  lastErrors: Array<{ partition?: string; message: string; record?: { table: string; key: string } }>;
}

async function status(stack: LocalStack): Promise<Status> {
  return (await (await fetch(`${stack.functions.backfill?.url}/status`)).json()) as Status;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The fix: `email` relaxed to NULLABLE. */
async function relaxEmail(stack: LocalStack) {
  const table = stack.emulators.bigquery.bigquery().dataset(LOCAL.dataset).table('customers');
  const [metadata] = await table.getMetadata();
  const fields = (metadata.schema.fields as Array<{ name: string; mode?: string }>).map((f) =>
    f.name === 'email' ? { ...f, mode: 'NULLABLE' } : f,
  );
  await table.setMetadata({ schema: { fields } });
}

/** Inserts customers, one transaction per call; `state.last` is the latest commit timestamp. */
function committer(stack: LocalStack) {
  const rng = new Random(11);
  const customers = stack.schema.customers;
  const state = { last: fromNanos(0n) };
  const commit = async (ids: number[], email: (id: number) => string | null) => {
    const rows = ids.map((id) => ({
      ...rowValues(customers, { customer_id: String(id) }, rng),
      email: email(id),
    }));
    const at = await stack.database.runTransactionAsync(async (tx) => {
      tx.insert(customers.name, rows);
      const [response] = await tx.commit();
      const ts = response.commitTimestamp as { seconds: string | number; nanos: number };
      return fromNanos(BigInt(ts.seconds) * 1_000_000_000n + BigInt(ts.nanos));
    });
    state.last = maxTimestamp(state.last, at);
  };
  return { commit, state };
}

const withEmail = (id: number) => `c${id}@example.com`;

/**
 * The hand-made replica, the first tick and a tick every 400 ms; then four customers with an email and the
 * poison one, 1000, without. The committer, for the rows a test commits after them.
 */
async function startWithPoison(stack: LocalStack): Promise<ReturnType<typeof committer>> {
  await handMadeReplica(stack);
  await tickEvery400ms(stack);
  const c = committer(stack);
  await c.commit([1, 2, 3, 4], withEmail);
  await c.commit([1000], () => null);
  return c;
}

/**
 * Two objects forged in the stream letter prefix through the official Storage client, as an account with
 * `objectUser` on the ledger (the scheduler's, say) could write them: a letter of a customer Spanner never
 * had, unsigned, and the genuine letter with its seal but another customer's values. Replay must refuse
 * both (ADR-2305); were either applied, the replica would hold a row Spanner has not and the verdict differ.
 */
async function forgeLetters(stack: LocalStack, genuineId: string) {
  const bucket = stack.emulators.gcs.storage().bucket(LOCAL.bucket);
  const prefix = `${LOCAL.pipeline}/dead-letters/stream/`;
  const [text] = await bucket.file(`${prefix}${genuineId}.json`).download();
  const genuine = JSON.parse(text.toString('utf8')) as Record<string, unknown> & {
    seal?: string;
    records: Array<{ record: { mods: Array<{ keys: Record<string, unknown> }> } }>;
  };
  expect(genuine.seal).toMatch(/^hmac-sha256:/);
  const [table, stamp] = genuineId.split(/\/|-/);
  const write = async (id: string, letter: Record<string, unknown>) => {
    await bucket.file(`${prefix}${id}.json`).save(JSON.stringify({ ...letter, id }), {
      contentType: 'application/json',
      metadata: { metadata: { 'sluice-table': table, 'sluice-state': 'pending', 'sluice-records': '1' } },
    });
    return id;
  };
  const other = structuredClone(genuine);
  other.records[0]!.record.mods[0]!.keys = { customer_id: '990001' };
  const { seal: _seal, ...unsigned } = structuredClone(other);
  return {
    unsigned: await write(`${table}/${stamp}-${'0'.repeat(16)}`, unsigned),
    altered: await write(`${table}/${stamp}-${'f'.repeat(16)}`, other),
  };
}

async function historyCounts(stack: LocalStack) {
  const [[counts]] = await stack.emulators.bigquery.bigquery().query({
    query: `SELECT COUNT(*) AS n, COUNT(DISTINCT change_id) AS d FROM ${LOCAL.dataset}.customers_history`,
  });
  return counts as { n: number; d: number };
}

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  'a poison record on the local stack, %s',
  (dialect) => {
    const stack = useLocalStack({ dialect, churnMs: 0 });

    it('fails only its partition, named in the status; retried after the fix it catches up exactly once', async () => {
      const customers = stack.schema.customers;
      const { commit, state } = await startWithPoison(stack);
      const failed = await until('the failed partition', async () => {
        const s = await status(stack);
        return s.partitions.failed === 1 ? s : undefined;
      });
      const [error] = failed.lastErrors;
      // The key as its hash under the default SLUICE_LOG_VALUES=none (ADR-2307).
      expect(error?.record).toMatchObject({ table: customers.name, key: keyHash('{"customer_id":"1000"}') });
      expect(error?.message).toMatch(/email/);
      // The other partition keeps flowing: rows committed after the failure arrive.
      for (let id = 10; id < 26; id++) await commit([id], withEmail);
      await until('rows after the failure', async () => {
        const rows = stack.emulators.bigquery.admin.tableRows(LOCAL.dataset, 'customers') as unknown[];
        return rows.length >= 8 ? rows : undefined;
      });
      expect((await status(stack)).partitions.failed).toBe(1);
      await relaxEmail(stack);
      const retried = await operatorPost(stack, '/partitions/retry');
      expect(retried.status).toBe(200);
      expect(((await retried.json()) as { retried: string[] }).retried).toEqual([error?.partition]);
      const caughtUp = await stack.waitForCatchUp(state.last, 20_000);
      if (!caughtUp) {
        const big = (_k: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);
        const seen = {
          status: await status(stack),
          progress: stack.progress(),
          errors: stack.errors.slice(-4),
        };
        console.error(JSON.stringify(seen, big).slice(0, 6000));
      }
      expect(caughtUp).toBe(true);
      await stack.stopTicking();
      expect((await status(stack)).partitions.failed).toBe(0);
      expect(await verdict(stack)).toBe(true);
      expect(await historyCounts(stack)).toEqual({ n: 21, d: 21 });
    }, 90_000);
  },
);

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  'a dead-lettered record on the local stack, %s',
  (dialect) => {
    const stack = useLocalStack({
      dialect,
      churnMs: 0,
      functionEnv: { SLUICE_ON_BAD_RECORD: 'dead-letter' },
    });

    it('is set aside while its partition goes on, listed, and replayed once after the fix', async () => {
      const backfill = stack.functions.backfill?.url;
      const { commit, state } = await startWithPoison(stack);
      for (let id = 10; id < 20; id++) await commit([id], withEmail);
      expect(await stack.waitForCatchUp(state.last, 20_000)).toBe(true);
      const s = await status(stack);
      expect(s.partitions.failed).toBe(0);
      const listed = (await (await fetch(`${backfill}/dead-letters`)).json()) as {
        items: Array<{ id: string; table: string; state: string }>;
        counts: { pending: number; byTable: Record<string, number> };
      };
      expect(listed.counts).toMatchObject({ pending: 1, byTable: { [stack.schema.customers.name]: 1 } });
      const forged = await forgeLetters(stack, listed.items[0]!.id);
      await relaxEmail(stack);
      const replay = async () => {
        const res = await operatorPost(stack, '/dead-letters/replay');
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };
      const first = await replay();
      expect(first).toMatchObject({ status: 200, body: { replayed: 1, failed: 0, untrusted: 2 } });
      const results = first.body.results as Array<{ id: string; outcome: string; error?: string }>;
      expect(results.filter((r) => r.outcome === 'untrusted')).toEqual([
        { id: forged.unsigned, outcome: 'untrusted', error: expect.stringContaining('unsigned') },
        { id: forged.altered, outcome: 'untrusted', error: expect.stringContaining('seal does not match') },
      ]);
      // Refused letters stay as they were: pending, never applied, refused again on every replay.
      expect(await replay()).toMatchObject({ status: 200, body: { replayed: 0, untrusted: 2 } });
      await stack.stopTicking();
      expect(await verdict(stack)).toBe(true);
      expect(await historyCounts(stack)).toEqual({ n: 15, d: 15 });
    }, 90_000);
  },
);
