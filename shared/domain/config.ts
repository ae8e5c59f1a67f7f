/**
 * Pipeline configuration: one zod schema, used for the functions' environment ({@link parseConfig}) and for
 * the Pulumi stack configuration ({@link parseConfigObject}), so both reject the same mistakes the same way.
 */
import { z } from 'zod';
import { BAD_RECORD_POLICIES } from './bad-records';
import { destinationProblems } from './destinations';
import { SluiceError } from './errors';
import { logValuesSchema } from './log-values';
import { ACCEPTABLE_STREAM_OPTIONS } from './stream-options';
import { tableRulesSchema } from './table-rules';
import { parseTimestamp, type Timestamp } from './timestamp';
import { issuePath, millis, wholeNumber } from './zod-helpers';

/** A required string matching `pattern`; a missing one says so rather than "expected string". */
function required(pattern: RegExp, rule: string) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : rule) })
    .regex(pattern, rule);
}

const GCP_PROJECT = /^[a-z][a-z0-9-]{4,28}[a-z0-9]$/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** `latest`, `snapshot`, or an RFC 3339 timestamp. */
const startAt = z.string().transform((text, ctx): StartAt => {
  if (text === 'latest' || text === 'snapshot') return { kind: text };
  try {
    return { kind: 'timestamp', at: parseTimestamp(text) };
  } catch {
    ctx.issues.push({
      code: 'custom',
      input: text,
      message: 'must be latest, snapshot or an RFC 3339 timestamp',
    });
    return z.NEVER;
  }
});

/** Where a new pipeline starts reading: now, a given commit timestamp, or a backfill snapshot then the stream. */
export type StartAt = { kind: 'latest' } | { kind: 'snapshot' } | { kind: 'timestamp'; at: Timestamp };

/** The configuration schema (input: structured object; output: {@link PipelineConfig}). */
export const configSchema = z
  .strictObject({
    /** Names the ledger prefix, labels and resources: lowercase, digits, hyphens. */
    pipeline: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,39}$/, 'must be 1-40 of [a-z0-9-], starting with a letter')
      .default('sluice'),
    project: required(GCP_PROJECT, 'must be a Google Cloud project id (6-30 of [a-z0-9-])'),
    spanner: z.strictObject({
      instance: required(/^[a-z][a-z0-9-]{0,61}[a-z0-9]$/, 'must be a Spanner instance id'),
      database: required(/^[a-z][a-z0-9_-]{0,28}[a-z0-9]$/, 'must be a Spanner database id'),
      stream: required(IDENTIFIER, 'must be an identifier ([A-Za-z_][A-Za-z0-9_]*)'),
    }),
    bigquery: z.strictObject({
      dataset: required(/^[A-Za-z0-9_]{1,1024}$/, 'must be a BigQuery dataset id ([A-Za-z0-9_])'),
    }),
    ledger: z.strictObject({
      bucket: required(/^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/, 'must be a Cloud Storage bucket name'),
    }),
    /**
     * `SLUICE_TABLES`: explicit entries, exclusions and the all-tables rule (see table-rules.ts); explicit
     * destinations that clash are refused here, with every other problem at once (ADR-1504).
     */
    tables: tableRulesSchema.superRefine((rules, ctx) => {
      for (const p of destinationProblems(rules.tables))
        ctx.addIssue({ code: 'custom', path: p.path, message: p.message });
    }),
    mode: z.enum(['scheduled', 'continuous'], 'must be scheduled or continuous').default('scheduled'),
    window: z
      .strictObject({
        /** Cloud Tasks' dispatch deadline is 30 min: a window must end well inside it. */
        maxMs: millis(1_000, 20 * 60_000, 10 * 60_000),
        longPollMs: millis(1_000, 20 * 60_000, 2 * 60_000),
      })
      .prefault({}),
    flush: z
      .strictObject({
        intervalMs: millis(100, 60_000, 1_000),
        /** GCS allows about one write per second per object. */
        checkpointMs: millis(1_000, 300_000, 5_000),
      })
      .prefault({}),
    /** History write streams live for many windows; these bounds rotate them deliberately (ADR-1601). */
    history: z
      .strictObject({
        streamMaxAgeMs: millis(60_000, 7 * 24 * 3_600_000, 24 * 3_600_000),
        streamMaxRows: wholeNumber(1_000, 1_000_000_000_000, 100_000_000),
      })
      .prefault({}),
    heartbeatMs: millis(1_000, 300_000, 10_000),
    leaseMs: millis(10_000, 35 * 60_000, 35 * 60_000),
    startAt: startAt.prefault('latest'),
    retentionFallback: z
      .enum(['fail', 'restart', 'restart-and-backfill'], 'must be fail, restart or restart-and-backfill')
      .default('fail'),
    /** Stream options the targets would refuse, accepted on purpose (see stream-options.ts). */
    acceptStreamOptions: z
      .preprocess(
        (v) =>
          typeof v === 'string'
            ? v
                .split(',')
                .map((x) => x.trim())
                .filter((x) => x !== '')
            : v,
        z.array(z.enum(ACCEPTABLE_STREAM_OPTIONS, `must list only ${ACCEPTABLE_STREAM_OPTIONS.join(', ')}`)),
      )
      .default([]),
    /** What a record a sink cannot take does: stop its partition, or go to the dead letters (ADR-1502). */
    onBadRecord: z.enum(BAD_RECORD_POLICIES, 'must be fail or dead-letter').default('fail'),
    /** What of a row the logs and the status may quote: nothing (default), keys, or all values (ADR-2307). */
    logValues: logValuesSchema,
  })
  .superRefine((c, ctx) => {
    if (c.window.longPollMs > c.window.maxMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['window', 'longPollMs'],
        message: `must not exceed window.maxMs (${c.window.maxMs} ms)`,
      });
    }
    if (c.leaseMs < c.window.maxMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['leaseMs'],
        message: `must be at least window.maxMs (${c.window.maxMs} ms): a lease must outlive its window`,
      });
    }
  })
  .transform(({ tables, ...rest }) => ({ ...rest, ...tables }));

/** A validated pipeline configuration. */
export type PipelineConfig = z.output<typeof configSchema>;
/** What the schema accepts (the shape of the Pulumi stack configuration). */
export type PipelineConfigInput = z.input<typeof configSchema>;

/** One broken rule: where (`path`, and the environment variable when parsed from one) and what. */
export interface ConfigIssue {
  path: string;
  variable?: string;
  rule: string;
}

/** Invalid configuration; the message lists every issue, one per line. */
export class ConfigError extends SluiceError {
  readonly issues: ConfigIssue[];
  constructor(issues: ConfigIssue[]) {
    const lines = issues.map((i) => `  - ${i.path}${i.variable ? ` (${i.variable})` : ''}: ${i.rule}`);
    super('invalid-input', `invalid configuration:\n${lines.join('\n')}`);
    this.issues = issues;
  }
}

/** Environment variable of each configuration path (documented in docs/configuration.md). */
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
  'history.streamMaxAgeMs': 'SLUICE_HISTORY_STREAM_MAX_AGE_MS',
  'history.streamMaxRows': 'SLUICE_HISTORY_STREAM_MAX_ROWS',
  heartbeatMs: 'SLUICE_HEARTBEAT_MS',
  leaseMs: 'SLUICE_LEASE_MS',
  startAt: 'SLUICE_START_AT',
  retentionFallback: 'SLUICE_RETENTION_FALLBACK',
  acceptStreamOptions: 'SLUICE_ACCEPT_STREAM_OPTIONS',
  onBadRecord: 'SLUICE_ON_BAD_RECORD',
  logValues: 'SLUICE_LOG_VALUES',
};

function variableFor(path: string): string | undefined {
  const base = path.replace(/\[\d+\]/g, '');
  for (let p = base; p !== ''; p = p.includes('.') ? p.slice(0, p.lastIndexOf('.')) : '') {
    const direct = ENV_VARIABLES[p];
    if (direct) return direct;
  }
  // `tables.Orders.replica` and `tables["Orders"]…` all come from SLUICE_TABLES.
  return path.startsWith('tables') ? ENV_VARIABLES.tables : undefined;
}

function toIssues(error: z.ZodError, variables: boolean): ConfigIssue[] {
  return error.issues.map((issue) => {
    const path = issuePath(issue.path);
    const variable = variables ? variableFor(path) : undefined;
    return variable ? { path, variable, rule: issue.message } : { path, rule: issue.message };
  });
}

/**
 * Validates an already-structured configuration (e.g. the Pulumi stack configuration).
 * @throws ConfigError listing every bad field with its path and the rule it broke.
 */
export function parseConfigObject(input: unknown): PipelineConfig {
  const parsed = configSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new ConfigError(toIssues(parsed.error, false));
}

/** Sets `obj[a][b]…` for a dotted path, creating objects on the way. */
function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let at = obj;
  for (const key of keys.slice(0, -1)) {
    at[key] = (at[key] as Record<string, unknown> | undefined) ?? {};
    at = at[key] as Record<string, unknown>;
  }
  at[keys[keys.length - 1]!] = value;
}

/**
 * Builds and validates the configuration from environment variables (see docs/configuration.md). Unset or
 * empty variables take their defaults; `SLUICE_TABLES` holds JSON. Pure: reads only `env`.
 * @throws ConfigError listing every bad variable with its path and the rule it broke.
 */
export function parseConfig(env: Record<string, string | undefined>): PipelineConfig {
  // Empty sections, so that a missing variable is reported by its own path.
  const input: Record<string, unknown> = { spanner: {}, bigquery: {}, ledger: {} };
  const jsonIssues: ConfigIssue[] = [];
  for (const [path, variable] of Object.entries(ENV_VARIABLES)) {
    const raw = env[variable]?.trim();
    if (raw === undefined || raw === '') continue;
    if (path !== 'tables') {
      setPath(input, path, raw);
      continue;
    }
    try {
      setPath(input, path, JSON.parse(raw));
    } catch (err) {
      jsonIssues.push({ path, variable, rule: `must be JSON: ${(err as Error).message}` });
      setPath(input, path, {});
    }
  }
  const parsed = configSchema.safeParse(input);
  if (parsed.success && jsonIssues.length === 0) return parsed.data;
  // With unreadable JSON the tables were replaced by `{}`; the issues that caused are noise.
  const issues = parsed.success ? [] : toIssues(parsed.error, true);
  const relevant = issues.filter((i) => jsonIssues.length === 0 || !i.path.startsWith('tables'));
  throw new ConfigError([...jsonIssues, ...relevant]);
}

/** `SLUICE_*` variables that configure nothing — most likely typos; worth a warning at startup. */
export function unknownVariables(env: Record<string, string | undefined>, known: string[] = []): string[] {
  const names = new Set([...Object.values(ENV_VARIABLES), ...known]);
  return Object.keys(env)
    .filter((k) => k.startsWith('SLUICE_') && !names.has(k))
    .sort();
}
