/**
 * The writer function's configuration: where it writes (project, instance, database), where dead letters go,
 * the batch limits, the retry budget and the policies. One zod schema over the environment, every bad
 * variable named at once (docs/writer.md lists them).
 */
import { z } from 'zod';
import { ConfigError, type ConfigIssue } from '../config';
import { parseVariables } from '../env-variables';
import { type LogValues, logValuesSchema } from '../log-values';
import { millis, wholeNumber } from '../zod-helpers';
import { type BatchLimits, DEFAULT_BATCH_LIMITS } from './batching';
import { type ConstraintViolationPolicy, DEFAULT_RETRY, type RetrySettings } from './policy';

/** Whether later writes of a key in one request wait for the earlier one's status. */
export type Ordering = 'none' | 'per-key';

/** The validated configuration. */
export interface WriterConfig {
  pipeline: string;
  project: string;
  instance: string;
  database: string;
  deadLetters: { bucket: string; prefix: string };
  limits: BatchLimits;
  retry: RetrySettings;
  /** Time from the request's arrival by which every attempt has ended (attempt timeouts are cut to it). */
  requestDeadlineMs: number;
  /** BatchWrite calls in flight at once for one request. */
  concurrency: number;
  maxRequestMutations: number;
  maxBodyBytes: number;
  constraintViolationPolicy: ConstraintViolationPolicy;
  ordering: Ordering;
  /** `SLUICE_LOG_VALUES`: what of a mutation's values the logs may quote (ADR-2307). */
  logValues: LogValues;
}

/** The writer's body limit when `SLUICE_WRITER_MAX_BODY_BYTES` is not set. */
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

const required = (pattern: RegExp, rule: string) =>
  z.string({ error: (i) => (i.input === undefined ? 'is required' : rule) }).regex(pattern, rule);

const BUCKET = /^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/;

/** Environment variable → schema. */
const schema = z.strictObject({
  SLUICE_PIPELINE: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,39}$/, 'must be 1-40 of [a-z0-9-], starting with a letter')
    .default('sluice'),
  SLUICE_PROJECT: required(/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/, 'must be a Google Cloud project id'),
  SLUICE_SPANNER_INSTANCE: required(/^[a-z][a-z0-9-]{0,61}[a-z0-9]$/, 'must be a Spanner instance id'),
  SLUICE_SPANNER_DATABASE: required(/^[a-z][a-z0-9_-]{0,28}[a-z0-9]$/, 'must be a Spanner database id'),
  SLUICE_LEDGER_BUCKET: z.string().regex(BUCKET, 'must be a Cloud Storage bucket name').optional(),
  SLUICE_WRITER_DEAD_LETTER_BUCKET: z
    .string()
    .regex(BUCKET, 'must be a Cloud Storage bucket name')
    .optional(),
  SLUICE_WRITER_DEAD_LETTER_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9._\-/]{1,200}\/$/, 'must be an object name prefix ending with /')
    .optional(),
  SLUICE_WRITER_MAX_BATCH_CELLS: wholeNumber(1, 1_000_000, DEFAULT_BATCH_LIMITS.maxCells),
  SLUICE_WRITER_MAX_BATCH_MUTATIONS: wholeNumber(1, 1_000_000, DEFAULT_BATCH_LIMITS.maxMutations),
  SLUICE_WRITER_MAX_BATCH_BYTES: wholeNumber(1_024, 200 * 1024 * 1024, DEFAULT_BATCH_LIMITS.maxBytes),
  SLUICE_WRITER_MAX_ATTEMPTS: wholeNumber(1, 100, DEFAULT_RETRY.maxAttempts),
  SLUICE_WRITER_BATCH_WRITE_TIMEOUT_MS: millis(1_000, 600_000, DEFAULT_RETRY.batchWriteTimeoutMs),
  SLUICE_WRITER_BACKOFF_INITIAL_MS: millis(1, 60_000, DEFAULT_RETRY.backoffInitialMs),
  SLUICE_WRITER_BACKOFF_MAX_MS: millis(1, 600_000, DEFAULT_RETRY.backoffMaxMs),
  SLUICE_WRITER_REQUEST_DEADLINE_MS: millis(1_000, 3_600_000, 400_000),
  SLUICE_WRITER_CONCURRENCY: wholeNumber(1, 64, 8),
  SLUICE_WRITER_MAX_REQUEST_MUTATIONS: wholeNumber(1, 100_000, 10_000),
  SLUICE_WRITER_MAX_BODY_BYTES: wholeNumber(1_024, 32 * 1024 * 1024, DEFAULT_MAX_BODY_BYTES),
  SLUICE_WRITER_CONSTRAINT_VIOLATION_POLICY: z
    .enum(['fail', 'route-to-failure-handler'], 'must be fail or route-to-failure-handler')
    .default('fail'),
  SLUICE_WRITER_ORDERING: z.enum(['none', 'per-key'], 'must be none or per-key').default('none'),
  SLUICE_LOG_VALUES: logValuesSchema,
});

/** The variables the writer reads. */
export const WRITER_VARIABLES = Object.keys(schema.shape);

/**
 * The writer's dead-letter prefix when none is configured: outside `<pipeline>/`, where the ledger keeps
 * everything the other functions trust, the reader's replayable dead letters included (ADR-2303).
 */
export function defaultWriterDeadLetterPrefix(pipeline: string): string {
  return `writer-dead-letters/${pipeline}/`;
}

/**
 * Why a writer dead-letter prefix in the ledger bucket is refused: the writer's account may create objects
 * under it, so it must neither lie inside the pipeline's ledger paths (`<pipeline>/`) nor contain them.
 */
export function ledgerOverlap(prefix: string, pipeline: string): string | undefined {
  const ledger = `${pipeline}/`;
  if (!prefix.startsWith(ledger) && !ledger.startsWith(prefix)) return undefined;
  return `must not overlap the ledger's paths (${ledger}) in the ledger bucket: the writer could create objects the other functions trust`;
}

function crossIssues(c: WriterConfig, bucketGiven: boolean, ledgerBucket?: string): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const overlap =
    c.deadLetters.bucket === ledgerBucket ? ledgerOverlap(c.deadLetters.prefix, c.pipeline) : undefined;
  if (overlap) issues.push({ path: 'SLUICE_WRITER_DEAD_LETTER_PREFIX', rule: overlap });
  if (!bucketGiven)
    issues.push({
      path: 'SLUICE_WRITER_DEAD_LETTER_BUCKET',
      rule: 'is required (or SLUICE_LEDGER_BUCKET, the default): dead letters need a bucket',
    });
  if (c.retry.backoffMaxMs < c.retry.backoffInitialMs)
    issues.push({
      path: 'SLUICE_WRITER_BACKOFF_MAX_MS',
      rule: `must be at least SLUICE_WRITER_BACKOFF_INITIAL_MS (${c.retry.backoffInitialMs})`,
    });
  if (c.requestDeadlineMs < c.retry.batchWriteTimeoutMs)
    issues.push({
      path: 'SLUICE_WRITER_REQUEST_DEADLINE_MS',
      rule: `must be at least SLUICE_WRITER_BATCH_WRITE_TIMEOUT_MS (${c.retry.batchWriteTimeoutMs}): one attempt must fit`,
    });
  return issues;
}

/**
 * Parses the writer's variables from `env` (pure: reads nothing else). Unset or empty variables take their
 * defaults. @throws ConfigError naming every bad variable.
 */
export function parseWriterConfig(env: Record<string, string | undefined>): WriterConfig {
  const e = parseVariables(env, WRITER_VARIABLES, schema);
  const config: WriterConfig = {
    pipeline: e.SLUICE_PIPELINE,
    project: e.SLUICE_PROJECT,
    instance: e.SLUICE_SPANNER_INSTANCE,
    database: e.SLUICE_SPANNER_DATABASE,
    deadLetters: {
      bucket: e.SLUICE_WRITER_DEAD_LETTER_BUCKET ?? e.SLUICE_LEDGER_BUCKET ?? '',
      prefix: e.SLUICE_WRITER_DEAD_LETTER_PREFIX ?? defaultWriterDeadLetterPrefix(e.SLUICE_PIPELINE),
    },
    limits: {
      maxCells: e.SLUICE_WRITER_MAX_BATCH_CELLS,
      maxMutations: e.SLUICE_WRITER_MAX_BATCH_MUTATIONS,
      maxBytes: e.SLUICE_WRITER_MAX_BATCH_BYTES,
    },
    retry: {
      maxAttempts: e.SLUICE_WRITER_MAX_ATTEMPTS,
      batchWriteTimeoutMs: e.SLUICE_WRITER_BATCH_WRITE_TIMEOUT_MS,
      backoffInitialMs: e.SLUICE_WRITER_BACKOFF_INITIAL_MS,
      backoffMaxMs: e.SLUICE_WRITER_BACKOFF_MAX_MS,
    },
    requestDeadlineMs: e.SLUICE_WRITER_REQUEST_DEADLINE_MS,
    concurrency: e.SLUICE_WRITER_CONCURRENCY,
    maxRequestMutations: e.SLUICE_WRITER_MAX_REQUEST_MUTATIONS,
    maxBodyBytes: e.SLUICE_WRITER_MAX_BODY_BYTES,
    constraintViolationPolicy: e.SLUICE_WRITER_CONSTRAINT_VIOLATION_POLICY,
    ordering: e.SLUICE_WRITER_ORDERING,
    logValues: e.SLUICE_LOG_VALUES,
  };
  const issues = crossIssues(config, config.deadLetters.bucket !== '', e.SLUICE_LEDGER_BUCKET);
  if (issues.length) throw new ConfigError(issues);
  return config;
}
