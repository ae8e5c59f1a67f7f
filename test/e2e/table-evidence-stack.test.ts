/**
 * What the ledger knows of BigQuery tables, on the local stack through the official clients (ADR-1516,
 * ADR-1517): a replica table created by a version that wrote no table markers (the markers are deleted from
 * the ledger bucket, as such a ledger has none) and deleted before any instance ensured it again is refused by
 * new reader and scheduler instances, because the last status listed it; the operator who meant the deletion
 * forgets it over HTTP and retries, and the table is created empty and written on, its history untouched.
 * A history table deleted on purpose is refused by its marker, forgotten, and holds every mod from the retried
 * window on exactly once (the write streams the ledger recorded for the deleted table are replaced).
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { LOCAL } from '../../local/stack-config';
import {
  committer,
  expectEveryModOnce,
  failedPartition,
  historyCounts,
  operatorPost,
  status,
  tickEvery400ms,
  until,
} from './support/failures';
import { useLocalStack } from './support/local-stack';

const BOUND = 150_000;

describe('tables deleted under the pipeline: after an upgrade to markers, and on purpose', () => {
  const stack = useLocalStack({ churnMs: 0 }, tickEvery400ms);

  it(
    'is refused from the status list alone; forgotten and retried, it starts empty and is written on',
    async () => {
      const c = committer(stack, 53);
      const { customers } = stack.schema;
      for (let i = 0; i < 4; i++) await c.insert('customers');
      await c.insert('orders', 3);
      expect(await stack.waitForCatchUp(c.state.last, 60_000)).toBe(true);
      // A ledger written before markers: none of them.
      const bucket = stack.emulators.gcs.storage().bucket(LOCAL.bucket);
      const marker = bucket.file(`${LOCAL.pipeline}/ensured/replica/customers`);
      expect((await marker.exists())[0]).toBe(true);
      const [markers] = await bucket.getFiles({ prefix: `${LOCAL.pipeline}/ensured/` });
      for (const f of markers) await f.delete();
      const dataset = stack.emulators.bigquery.bigquery().dataset(LOCAL.dataset);
      await dataset.table('customers').delete();
      await Promise.all([stack.functions.reader!.restart(), stack.functions.scheduler!.restart()]);
      await c.insert('customers');
      const failed = await failedPartition(stack);
      expect(failed.lastErrors[0]?.message).toMatch(/BigQuery table sluice_demo\.customers was not found/);
      expect(failed.lastErrors[0]?.message).toMatch(/POST \/tables\/forget/);
      // Not recreated empty, and the status's evidence is a marker now.
      expect((await dataset.table('customers').exists())[0]).toBe(false);
      expect((await marker.exists())[0]).toBe(true);
      // Meant: the operator forgets it, then retries.
      const forget = await operatorPost(stack, '/tables/forget', {
        table: customers.name,
        targets: ['replica'],
      });
      expect(forget.status).toBe(200);
      expect(((await forget.json()) as { forgotten: unknown[] }).forgotten).toEqual([
        { target: 'replica', destination: 'customers', before: 'marked' },
      ]);
      const retried = await operatorPost(stack, '/partitions/retry');
      expect(((await retried.json()) as { retried: string[] }).retried.length).toBeGreaterThan(0);
      for (let i = 0; i < 3; i++) await c.insert('customers');
      expect(await stack.waitForCatchUp(c.state.last, 60_000)).toBe(true);
      await stack.stopTicking();
      const s = await status(stack);
      expect(s.partitions.failed).toBe(0);
      expect(s.tables?.find((t) => t.source === customers.name)?.state).toBe('replicating');
      // Created empty: the 4 rows from before the deletion are gone (a backfill would reload them); the 4
      // committed since are there. The history table was not touched: every mod once.
      const [[{ n }]] = await stack.emulators.bigquery
        .bigquery()
        .query({ query: `SELECT COUNT(*) AS n FROM ${LOCAL.dataset}.customers` });
      expect(n).toBe(4);
      await expectEveryModOnce(stack, c, ['customers']);
      const live = JSON.parse((await marker.download())[0].toString('utf8')) as Record<string, unknown>;
      expect(live).toEqual({ kind: 'replica', destination: 'customers' });
    },
    BOUND,
  );

  it(
    'a history table removed on purpose: refused by its marker, forgotten, then written anew from the retry on',
    async () => {
      const c = committer(stack, 59);
      const { orders } = stack.schema;
      stack.startTicking(400);
      await c.insert('orders', 2);
      expect(await stack.waitForCatchUp(c.state.last, 60_000)).toBe(true);
      const bq = stack.emulators.bigquery.bigquery();
      await bq.dataset(LOCAL.dataset).table('orders_history').delete();
      await Promise.all([stack.functions.reader!.restart(), stack.functions.scheduler!.restart()]);
      await c.insert('orders', 3);
      const failed = await until(
        'the failed partition',
        async () => {
          const s = await status(stack);
          return s.lastErrors.some((e) =>
            /history table sluice_demo\.orders_history was not found/.test(e.message),
          )
            ? s
            : undefined;
        },
        60_000,
      );
      expect(failed.partitions.failed).toBeGreaterThan(0);
      expect((await bq.dataset(LOCAL.dataset).table('orders_history').exists())[0]).toBe(false);
      const forget = await operatorPost(stack, '/tables/forget', {
        table: orders.name,
        targets: ['history'],
      });
      expect(((await forget.json()) as { forgotten: unknown[] }).forgotten).toEqual([
        { target: 'history', destination: 'orders_history', before: 'marked' },
      ]);
      await operatorPost(stack, '/partitions/retry');
      await c.insert('orders', 2);
      expect(await stack.waitForCatchUp(c.state.last, 60_000)).toBe(true);
      await stack.stopTicking();
      expect((await status(stack)).partitions.failed).toBe(0);
      // The 5 orders committed since the deletion are in the new history table, each once.
      expect(await historyCounts(stack, 'orders_history')).toEqual({ n: 5, d: 5 });
    },
    BOUND,
  );
});
