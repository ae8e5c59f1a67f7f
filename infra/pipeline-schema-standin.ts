/**
 * TEMPORARY STAND-IN for `shared/domain/config.ts` (the shared pipeline schema), exporting the same names
 * with the same meaning for the subset the deployment uses: `parseConfigObject`, `parseConfig`,
 * `ConfigError` (issues `{path, variable?, rule}`), `ENV_VARIABLES`, `PipelineConfig`. Once the shared module
 * is merged, `pipeline-adapter.ts` imports from it instead and this file is deleted.
 */
import { z } from 'zod';
import { parseTimestamp, type Timestamp } from '../shared/domain/timestamp';

const ms = (min: number, max: number, fallback: number) =>
  z
    .union([z.number(), z.string().regex(/^\d+$/).transform(Number)])
    .pipe(z.number().int().min(min).max(max))
    .default(fallback);
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const table = z.string().regex(/^[A-Za-z0-9_]{1,1024}$/, 'must be a BigQuery table name ([A-Za-z0-9_])');

/** Where a new pipeline starts reading. */
export type StartAt = { kind: 'latest' } | { kind: 'snapshot' } | { kind: 'timestamp'; at: Timestamp };

const schema = z.strictObject({
  pipeline: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,39}$/)
    .default('sluice'),
  project: z.string().regex(/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/, 'must be a Google Cloud project id'),
  spanner: z.strictObject({
    instance: z.string().regex(/^[a-z][a-z0-9-]{0,61}[a-z0-9]$/, 'must be a Spanner instance id'),
    database: z.string().regex(/^[a-z][a-z0-9_-]{0,28}[a-z0-9]$/, 'must be a Spanner database id'),
    stream: z.string().regex(IDENTIFIER, 'must be an identifier ([A-Za-z_][A-Za-z0-9_]*)'),
  }),
  bigquery: z.strictObject({
    dataset: z.string().regex(/^[A-Za-z0-9_]{1,1024}$/, 'must be a BigQuery dataset id'),
  }),
  ledger: z.strictObject({ bucket: z.string().regex(/^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/) }),
  tables: z
    .record(
      z.string().regex(IDENTIFIER),
      z.strictObject({ replica: table.optional(), history: table.optional() }),
    )
    .refine((t) => Object.keys(t).length > 0, { message: 'must watch at least one table' }),
  mode: z.enum(['scheduled', 'continuous']).default('scheduled'),
  window: z
    .strictObject({ maxMs: ms(1_000, 1_200_000, 600_000), longPollMs: ms(1_000, 1_200_000, 120_000) })
    .prefault({}),
  flush: z
    .strictObject({ intervalMs: ms(100, 60_000, 1_000), checkpointMs: ms(1_000, 300_000, 5_000) })
    .prefault({}),
  heartbeatMs: ms(1_000, 300_000, 10_000),
  leaseMs: ms(10_000, 2_100_000, 2_100_000),
  startAt: z
    .string()
    .transform(
      (t): StartAt =>
        t === 'latest' || t === 'snapshot' ? { kind: t } : { kind: 'timestamp', at: parseTimestamp(t) },
    )
    .prefault('latest'),
  retentionFallback: z.enum(['fail', 'restart', 'restart-and-backfill']).default('fail'),
});

/** A validated pipeline configuration. */
export type PipelineConfig = z.output<typeof schema>;

/** One broken rule. */
export interface ConfigIssue {
  path: string;
  variable?: string;
  rule: string;
}

/** Invalid configuration. */
export class ConfigError extends Error {
  readonly issues: ConfigIssue[];
  constructor(issues: ConfigIssue[]) {
    super(`invalid configuration:\n${issues.map((i) => `  - ${i.path}: ${i.rule}`).join('\n')}`);
    this.issues = issues;
  }
}

/** Environment variable of each configuration path. */
export const ENV_VARIABLES: Record<string, string> = {
  pipeline: 'SLUICE_PIPELINE',
  project: 'SLUICE_PROJECT',
  'spanner.instance': 'SLUICE_SPANNER_INSTANCE',
  'spanner.database': 'SLUICE_SPANNER_DATABASE',
  'spanner.stream': 'SLUICE_SPANNER_STREAM',
  'bigquery.dataset': 'SLUICE_BIGQUERY_DATASET',
  'ledger.bucket': 'SLUICE_LEDGER_BUCKET',
  tables: 'SLUICE_TABLES',
  mode: 'SLUICE_MODE',
  'window.maxMs': 'SLUICE_WINDOW_MAX_MS',
  'window.longPollMs': 'SLUICE_WINDOW_LONG_POLL_MS',
  'flush.intervalMs': 'SLUICE_FLUSH_INTERVAL_MS',
  'flush.checkpointMs': 'SLUICE_CHECKPOINT_INTERVAL_MS',
  heartbeatMs: 'SLUICE_HEARTBEAT_MS',
  leaseMs: 'SLUICE_LEASE_MS',
  startAt: 'SLUICE_START_AT',
  retentionFallback: 'SLUICE_RETENTION_FALLBACK',
};

function fail(error: z.ZodError): never {
  throw new ConfigError(error.issues.map((i) => ({ path: i.path.map(String).join('.'), rule: i.message })));
}

/** Validates an already-structured configuration. */
export function parseConfigObject(input: unknown): PipelineConfig {
  const parsed = schema.safeParse(input);
  return parsed.success ? parsed.data : fail(parsed.error);
}

/** Builds and validates the configuration from environment variables. */
export function parseConfig(env: Record<string, string | undefined>): PipelineConfig {
  const input: Record<string, unknown> = {};
  for (const [path, variable] of Object.entries(ENV_VARIABLES)) {
    const raw = env[variable];
    if (raw === undefined || raw === '') continue;
    const keys = path.split('.');
    let at = input;
    for (const k of keys.slice(0, -1)) {
      at[k] = at[k] ?? {};
      at = at[k] as Record<string, unknown>;
    }
    at[keys[keys.length - 1]!] = path === 'tables' ? JSON.parse(raw) : raw;
  }
  return parseConfigObject(input);
}
