/**
 * Schema and stream drift on the local stack, both dialects, through the official clients: the demo workload
 * keeps writing while columns are added, widened and dropped, a table with a stored generated column is
 * created (the FOR ALL stream and the all-tables form of SLUICE_TABLES pick it up), the capture type changes,
 * or an option starts hiding deletes. After catch-up every replica equals Spanner row for row (new columns
 * and generated values included) and every history table holds every committed mod; the status lists each
 * table with its column count; a hiding option stops the pipeline with a reason and fixing it resumes it.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { Dialect } from '../../shared/domain/change-record';
import { captureTypeChanges, schemaChanges, setStreamOptions } from './support/drift';
import { type FaultContext, type FaultPlan, runScenario } from './support/scenario';

const BOUND = Number(process.env.E2E_BOUND ?? 200_000);

interface TableEntry {
  source: string;
  replica: string | null;
  history: string | null;
  columns: number;
  state: string;
}

async function statusAfterTick(ctx: FaultContext): Promise<Record<string, unknown>> {
  await ctx.stack.tick();
  return ctx.stack.status() ?? {};
}

/** Ticks until the status's state is `state`, for at most 15 s; the last status seen. */
async function tickUntilState(ctx: FaultContext, state: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 15_000;
  let status: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    status = await statusAfterTick(ctx);
    if (status.state === state) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return status;
}

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])('drift (%s)', (dialect) => {
  const n = (name: string) => (dialect === 'POSTGRESQL' ? name.toLowerCase() : name);
  /** One drift run of `steps` workload transactions under `plan`, named after `what`. */
  const drift = (what: string, plan: FaultPlan, steps = 40) =>
    runScenario({
      name: `drift ${dialect}: ${what}`,
      file: __filename,
      dialect,
      steps,
      catchUpMs: 45_000,
      boundMs: 90_000,
      plan,
    });

  it(
    'columns added, widened and dropped, a new table with a generated column, while writes run',
    async () => {
      const plan = schemaChanges(dialect);
      let tables: TableEntry[] = [];
      await drift('schema changes', {
        ...plan,
        async afterCatchUp(ctx) {
          tables = ((await statusAfterTick(ctx)).tables ?? []) as TableEntry[];
        },
      });
      const entry = (source: string) => tables.find((t) => t.source === source);
      // Customers gained nickname and lost email (BigQuery keeps it): 11 - 1 + 1 replicated columns.
      expect(entry(n('Customers'))).toMatchObject({
        replica: 'customers',
        state: 'replicating',
        columns: 11,
      });
      expect(entry(n('Orders'))).toMatchObject({ state: 'replicating', columns: 7 });
      expect(entry(n('Labels'))).toEqual({
        source: n('Labels'),
        replica: 'labels',
        history: 'labels_history',
        columns: 4,
        state: 'replicating',
      });
    },
    BOUND,
  );

  it(
    'the capture type changes twice while writes run',
    async () => {
      await drift('capture type', captureTypeChanges(dialect));
    },
    BOUND,
  );

  it(
    'an option that hides deletes stops the pipeline with a reason; turning it off resumes it',
    async () => {
      let stopped: Record<string, unknown> = {};
      let resumed: Record<string, unknown> = {};
      await drift(
        'hiding option',
        {
          async beforeStep(ctx, step) {
            if (step !== 15) return;
            await setStreamOptions(ctx, dialect, 'exclude_delete = true');
            stopped = await tickUntilState(ctx, 'stopped');
            // Nothing the stream would hide is written while the option is on: the verdict can be exact.
            await setStreamOptions(ctx, dialect, 'exclude_delete = false');
            resumed = await tickUntilState(ctx, 'running');
          },
        },
        30,
      );
      expect(stopped.state).toBe('stopped');
      expect(String(stopped.reason)).toMatch(
        /exclude_delete = true: .*deleted rows would stay in the replica/,
      );
      expect(String(stopped.reason)).toMatch(/SLUICE_ACCEPT_STREAM_OPTIONS=exclude_delete/);
      expect(resumed.state).toBe('running');
    },
    BOUND,
  );
});
