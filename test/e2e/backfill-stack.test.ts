/**
 * Backfills on the local stack (every emulator, the three functions as processes, official clients), in
 * both dialects. The pipeline starts with `startAt: "snapshot"` on pre-filled tables; while a workload keeps
 * writing and replication keeps running, an HTTP backfill reloads the written tables, its worker process is
 * killed and restarted, and one of its tasks is delivered twice. Afterwards every replica equals Spanner
 * (nothing missed, no snapshot row over a newer change), every bad request got its 400, the documented
 * retention error came back, a cancelled job stays cancelled, and `GET` progress matches what BigQuery holds.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { LocalStack } from '../../local/stack';
import { queueName } from '../../local/stack-config';
import type { Dialect } from '../../shared/domain/change-record';
import { addNanos, formatTimestamp, parseTimestamp } from '../../shared/domain/timestamp';
import { runEventProblems } from '../unit/domain/lineage/open-lineage-schema';
import { useLocalStack } from './support/local-stack';

type View = { id: string; state: string; origin: string; rowsWritten: number; snapshotTimestamp: string };

async function call(url: string, method: string, body?: string): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, {
    method,
    // Every state-changing route requires the JSON content type, a body or not (ADR-2301).
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body }),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: res.status, json: await res.json().catch(() => undefined) };
}

async function waitFor(url: string, states: string[], timeoutMs: number): Promise<View> {
  const deadline = Date.now() + timeoutMs;
  let view: View | undefined;
  while (Date.now() < deadline) {
    const got = await call(url, 'GET').catch(() => undefined);
    view = got?.json as View | undefined;
    if (got?.status === 200 && view && states.includes(view.state)) return view;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`backfill not ${states.join('/')} in time: ${JSON.stringify(view)}`);
}

/**
 * The runs the local Data Lineage API recorded, read back through the official client: the pipeline's run
 * started, each finished backfill completed, the cancelled one aborted; every event valid OpenLineage.
 */
async function expectBackfillLineage(stack: LocalStack, completed: number): Promise<void> {
  for (const e of stack.emulators.lineage.admin.events()) expect(runEventProblems(e.openLineage)).toEqual([]);
  const client = stack.emulators.lineage.client();
  const [processes] = await client.listProcesses({ parent: 'projects/sluice-local/locations/local' });
  const byName = new Map(processes.map((p) => [p.displayName, p.name!]));
  expect([...byName.keys()].sort()).toEqual([
    'sluice://sluice-local.sluice',
    'sluice://sluice-local.sluice.backfill',
  ]);
  const [pipelineRuns] = await client.listRuns({ parent: byName.get('sluice://sluice-local.sluice')! });
  expect(pipelineRuns.map((r) => r.state)).toEqual(['STARTED']);
  const [backfillRuns] = await client.listRuns({
    parent: byName.get('sluice://sluice-local.sluice.backfill')!,
  });
  const states = backfillRuns.map((r) => String(r.state)).sort();
  expect(states).toEqual([...Array(completed).fill('COMPLETED'), 'ABORTED'].sort());
}

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  'backfills on the local stack, %s',
  (dialect) => {
    let workload: ReturnType<LocalStack['workload']> | undefined;

    const stack = useLocalStack({
      dialect,
      churnMs: 2_000,
      functionEnv: { SLUICE_START_AT: 'snapshot' },
    });

    it('hands over from snapshots to the stream under a live workload, with crashes and duplicates', async () => {
      const api = `${stack.functions.backfill!.url}/backfills`;
      const { customers, orders, products } = stack.schema;
      workload = stack.workload(21);
      for (let i = 0; i < 12; i++) await workload.step();
      await workload.prefillProducts(25);
      expect((await stack.tick()).status).toBe(200);
      const start = await waitFor(`${api}/start-at-snapshot`, ['running', 'succeeded'], 5_000);
      expect(start.origin).toBe('start-at-snapshot');
      const t = parseTimestamp(start.snapshotTimestamp);
      stack.startTicking(400);
      workload.start(150);

      const bad: Array<[string, RegExp, number?]> = [
        ['', /empty/],
        ['{"tables": ["Nope"]}', /unknown table Nope/],
        [`{"tables": ["${products.name}"], "targets": ["history"]}`, /no configured history/],
        [`{"tables": ["${customers.name}"], "priority": "urgent"}`, /priority/],
        [`{"tables": ["${customers.name}"], "extra": 1}`, /extra/],
        // Refused by size before any parsing (ADR-2301): 413, as an HTTP server answers a body too large.
        [JSON.stringify({ tables: [customers.name], pad: 'x'.repeat(70_000) }), /limit 65536/, 413],
        [
          JSON.stringify({
            tables: [customers.name],
            readTimestamp: formatTimestamp(addNanos(t, -7_200_000_000_000n)),
          }),
          /version_retention_period.*ALTER DATABASE/,
        ],
      ];
      for (const [body, message, status] of bad) {
        const answer = await call(api, 'POST', body);
        expect([answer.status, JSON.stringify(answer.json)]).toEqual([
          status ?? 400,
          expect.stringMatching(message),
        ]);
      }

      const posted = await call(api, 'POST', JSON.stringify({ tables: [customers.name, orders.name] }));
      expect(posted.status).toBe(202);
      const { id } = posted.json as { id: string };
      const duplicate = await call(
        `${api}/tasks`,
        'POST',
        JSON.stringify({ pipeline: 'sluice', job: id, partition: 0 }),
      );
      expect(duplicate.status).toBe(200);

      // The backfill queue is paused (through the official client) while the small job is posted and
      // cancelled, so no partition of it can finish first: the cancel meets a job that is still running.
      const backfillQueue = { name: queueName('backfill') };
      await stack.emulators.tasks.client().pauseQueue(backfillQueue);
      const cancel = await call(api, 'POST', JSON.stringify({ tables: [products.name] }));
      const cancelled = await call(`${api}/${(cancel.json as { id: string }).id}`, 'DELETE');
      await stack.emulators.tasks.client().resumeQueue(backfillQueue);
      expect((cancelled.json as View).state).toBe('cancelled');

      const reloaded = await waitFor(`${api}/${id}`, ['succeeded'], 20_000);
      await waitFor(`${api}/start-at-snapshot`, ['succeeded'], 5_000);
      await workload.stop();
      const caughtUp = await stack.waitForCatchUp(workload.lastCommit!, 20_000);
      if (!caughtUp) {
        const text = JSON.stringify(stack.progress(), (_k, v) => (typeof v === 'bigint' ? String(v) : v));
        console.error(
          text.slice(0, 2000),
          formatTimestamp(workload.lastCommit!),
          JSON.stringify(stack.errors.filter((e) => e.function !== 'backfill')).slice(0, 1500),
        );
      }
      expect(caughtUp).toBe(true);
      await stack.stopTicking();
      expect((await call(`${api}/${(cancel.json as { id: string }).id}`, 'GET')).json).toMatchObject({
        state: 'cancelled',
      });

      const afterStart = workload.journal.filter((m) => parseTimestamp(m.commitTimestamp) > t);
      const verdict = await stack.verify(afterStart);
      if (!verdict.equal) console.error(JSON.stringify(verdict, null, 2).slice(0, 3000));
      expect(verdict.equal).toBe(true);
      const bq = stack.emulators.bigquery.admin;
      const snapshotRows = [customers, orders].flatMap((table) =>
        (bq.tableRows('sluice_demo', table.history!) as Array<Record<string, unknown>>).filter(
          (r) => r.server_transaction_id === `backfill-${id}`,
        ),
      );
      expect(reloaded.rowsWritten).toBe(new Set(snapshotRows.map((r) => r.change_id)).size);
      // Crashed and duplicated partition tasks included: each snapshot row is in the history once.
      expect(snapshotRows).toHaveLength(reloaded.rowsWritten);
      expect(reloaded.rowsWritten).toBeGreaterThan(0);
      expect(bq.tableRows('sluice_demo', products.replica!)).toHaveLength(25);
      const list = (await call(api, 'GET')).json as { backfills: View[] };
      expect(list.backfills.map((b) => b.id).sort()).toEqual(
        ['start-at-snapshot', id, (cancel.json as { id: string }).id].sort(),
      );
      expect(stack.errors.filter((e) => !/backfill|task/.test(JSON.stringify(e)))).toEqual([]);
      await expectBackfillLineage(stack, 2);
    }, 55_000);
  },
);
