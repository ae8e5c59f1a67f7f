/**
 * Runs a list of `@google-cloud/bigquery` calls against the emulator in a plain Node process and prints
 * the outcomes as JSON. Tests use it because the client's HTTP layer does `import('node-fetch')`, which
 * jest refuses without `--experimental-vm-modules`; the client is still the unmodified package.
 *
 * Usage: `tsx rest-probe.ts '<json {restUrl?, projectId, steps}>'` (without restUrl, BIGQUERY_EMULATOR_HOST
 * is used).
 */
import { BigQuery } from '@google-cloud/bigquery';

/** One client call. */
export type ProbeStep =
  | { op: 'createDataset'; dataset: string }
  | { op: 'deleteDataset'; dataset: string; force?: boolean }
  | { op: 'createTable'; dataset: string; table: string; options: Record<string, unknown> }
  | { op: 'getMetadata' | 'exists' | 'deleteTable'; dataset: string; table: string }
  | { op: 'setMetadata'; dataset: string; table: string; metadata: Record<string, unknown> }
  | { op: 'getRows'; dataset: string; table: string; options?: Record<string, unknown> }
  | { op: 'getTables'; dataset: string }
  | { op: 'tabledata'; dataset: string; table: string; qs: Record<string, unknown> }
  | { op: 'query'; query: string; params?: Record<string, unknown> };

/** One outcome: the value returned, or the error's code, message and reasons. */
export type ProbeResult = { ok: unknown } | { error: { code?: number; message: string; reasons: string[] } };

async function run(bq: BigQuery, step: ProbeStep): Promise<unknown> {
  switch (step.op) {
    case 'createDataset':
      return (await bq.createDataset(step.dataset))[1];
    case 'deleteDataset':
      return (await bq.dataset(step.dataset).delete({ force: step.force ?? false }))[0];
    case 'createTable':
      return (await bq.dataset(step.dataset).createTable(step.table, step.options))[1];
    case 'getMetadata':
      return (await bq.dataset(step.dataset).table(step.table).getMetadata())[0];
    case 'exists':
      return (await bq.dataset(step.dataset).table(step.table).exists())[0];
    case 'deleteTable':
      return (await bq.dataset(step.dataset).table(step.table).delete())[0];
    case 'setMetadata':
      return (await bq.dataset(step.dataset).table(step.table).setMetadata(step.metadata))[0];
    case 'getRows':
      return (
        await bq
          .dataset(step.dataset)
          .table(step.table)
          .getRows(step.options ?? {})
      )[0];
    case 'getTables':
      return (await bq.dataset(step.dataset).getTables())[0].map((t) => t.id);
    case 'tabledata': {
      // The raw tabledata.list answer (the client's own request), e.g. with picosecond format options.
      const table = bq.dataset(step.dataset).table(step.table);
      return new Promise((resolve, reject) =>
        table.request({ uri: '/data', qs: step.qs }, (err: Error | null, resp?: unknown) =>
          err ? reject(err) : resolve(resp),
        ),
      );
    }
    case 'query':
      return (await bq.query({ query: step.query, ...(step.params ? { params: step.params } : {}) }))[0];
  }
}

function describe(err: unknown): ProbeResult {
  const e = err as { code?: number; message?: string; errors?: Array<{ reason?: string }> };
  return {
    error: {
      code: e.code,
      message: e.message ?? String(err),
      reasons: (e.errors ?? []).map((x) => x.reason ?? ''),
    },
  };
}

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2] ?? '{}') as {
    restUrl?: string;
    projectId: string;
    steps: ProbeStep[];
  };
  const bq = new BigQuery({
    projectId: input.projectId,
    ...(input.restUrl ? { apiEndpoint: input.restUrl } : {}),
  });
  const results: ProbeResult[] = [];
  for (const step of input.steps) {
    try {
      results.push({ ok: await run(bq, step) });
    } catch (err) {
      results.push(describe(err));
    }
  }
  process.stdout.write(JSON.stringify(results, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
