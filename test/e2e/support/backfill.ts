/**
 * A backfill racing live changes: a table only a backfill brings over is pre-filled, and in the middle of
 * the workload `POST /backfills` snapshots every demo table while transactions keep committing. Rows at the
 * snapshot carry sequence (T, 0, 0), so a live change after T must win over them in the replica.
 */
import type { FaultContext, FaultPlan } from './scenario';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function json(res: Response): Promise<Record<string, unknown>> {
  return (await res.json()) as Record<string, unknown>;
}

/** Waits until the job succeeded (throws on failure, cancellation or timeout). */
async function awaitJob(url: string, id: string, timeoutMs: number): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  let view: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    view = await json(await fetch(`${url}/backfills/${encodeURIComponent(id)}`));
    if (view.state === 'succeeded') return view;
    if (view.state === 'failed' || view.state === 'cancelled') break;
    await sleep(250);
  }
  throw new Error(`backfill ${id} did not succeed: ${JSON.stringify(view).slice(0, 1000)}`);
}

/** The plan; `startAt` is the workload step at which the backfill is requested. */
export function racingBackfill(options: { prefill?: number; startAt?: number } = {}): FaultPlan & {
  job: () => Record<string, unknown> | undefined;
} {
  let id: string | undefined;
  let done: Record<string, unknown> | undefined;
  const url = (ctx: FaultContext) => ctx.stack.functions.backfill!.url;
  return {
    job: () => done,
    async prepare(ctx) {
      await ctx.workload.prefillProducts(options.prefill ?? 25);
    },
    async beforeStep(ctx, step) {
      if (step !== (options.startAt ?? 10)) return;
      const tables = ctx.stack.schema.tables.map((t) => t.name);
      // An operator retries a 5xx (another fault may have hit the job's ledger write); a 4xx is a bug.
      let res: Response | undefined;
      let body: Record<string, unknown> = {};
      for (let attempt = 0; attempt < 3 && (!res || res.status >= 500); attempt++) {
        res = await fetch(`${url(ctx)}/backfills`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          // Every configured target: the history tables get SNAPSHOT rows, exactly once under the faults too.
          body: JSON.stringify({ tables }),
        });
        body = await json(res);
      }
      if (res?.status !== 202)
        throw new Error(`POST /backfills answered ${res?.status}: ${JSON.stringify(body)}`);
      id = String(body.id);
      ctx.log.push(`backfill ${id} of ${tables.join(', ')} at ${String(body.snapshotTimestamp)}`);
    },
    async afterWorkload(ctx) {
      if (!id) throw new Error('the backfill was never requested');
      // A fault family may hold one of its history appends back for 25 s (the slow reader's hold).
      done = await awaitJob(url(ctx), id, 45_000);
    },
  };
}
