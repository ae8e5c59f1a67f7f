/**
 * Deployment settings of the functions, beside the pipeline configuration: where reader tasks go and how they
 * authenticate, when to warn about retention, the Spanner request priority. The Pulumi program passes the
 * queue names, the invoker service account and the function URLs; the rest have defaults. Validated with zod
 * like the configuration, every bad variable named at once (docs/configuration.md).
 */
import { z } from 'zod';
import { parseVariables } from '../domain/env-variables';
import { millis } from '../domain/zod-helpers';

const QUEUE = /^projects\/[^/]+\/locations\/[^/]+\/queues\/[A-Za-z0-9-]{1,100}$/;

const deploymentSchema = z.strictObject({
  SLUICE_READER_URL: z.url({ error: 'is required: the URL of the reader function (https://…)' }),
  /** One queue, or several separated by commas: reader tasks are spread over them by partition. */
  SLUICE_READER_QUEUE: z.preprocess(
    (v) => (typeof v === 'string' ? v.split(',').map((q) => q.trim()) : v),
    z
      .array(
        z
          .string()
          .regex(QUEUE, 'must be full queue names projects/<p>/locations/<l>/queues/<q>, comma-separated'),
        { error: 'is required' },
      )
      .min(1)
      .refine((qs) => new Set(qs).size === qs.length, 'names a queue twice'),
  ),
  SLUICE_BACKFILL_QUEUE: z
    .string()
    .regex(QUEUE, 'must be a full queue name projects/<p>/locations/<l>/queues/<q>')
    .optional(),
  SLUICE_TASKS_SERVICE_ACCOUNT: z.email('must be a service account e-mail').optional(),
  SLUICE_RETENTION_MARGIN_MS: millis(60_000, 7 * 86_400_000, 6 * 3_600_000),
  SLUICE_IDLE_DELAY_MS: millis(1_000, 600_000, 30_000),
  SLUICE_IDLE_MAX_DELAY_MS: millis(1_000, 3_600_000, 300_000),
  SLUICE_QUIET_CHECKPOINT_MS: millis(0, 86_400_000, 600_000),
  SLUICE_REQUEST_PRIORITY: z.enum(['low', 'medium', 'high'], 'must be low, medium or high').default('low'),
  SLUICE_DISPATCH_DEADLINE_S: z
    .preprocess(
      (v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v),
      z.number().int().min(15, 'must be 15-1800 seconds').max(1800, 'must be 15-1800 seconds'),
    )
    .default(1800),
});

/** Validated deployment settings. */
export interface DeploymentSettings {
  readerUrl: string;
  /** The reader's queues (one, or the shards a large pipeline spreads its partitions over). */
  readerQueues: string[];
  backfillQueue: string | undefined;
  tasksServiceAccount: string | undefined;
  retentionMarginMs: number;
  idleDelayMs: number;
  /** Cap of the idle back-off of quiet partitions (never below `idleDelayMs`). */
  idleMaxDelayMs?: number;
  /** A quiet partition's position is written only once it is this old. */
  quietCheckpointMs?: number;
  requestPriority: 'low' | 'medium' | 'high';
  dispatchDeadlineSeconds: number;
  /**
   * `SLUICE_WRITER_DEAD_LETTER_PREFIX`, the writer's own variable, which the deployment gives every function
   * so the status and the operator routes list the writer's letters where it writes them (ADR-2203).
   */
  writerDeadLetterPrefix?: string;
}

/** The variables this module reads (so the startup warning about unknown `SLUICE_*` names ignores them). */
export const DEPLOYMENT_VARIABLES = [
  ...Object.keys(deploymentSchema.shape),
  'SLUICE_BACKFILL_URL',
  'SLUICE_DATA_BOOST',
  'SLUICE_FUNCTION',
  'SLUICE_REGION',
];

/**
 * Parses the deployment variables. @throws ConfigError naming every bad variable.
 */
export function parseDeploymentSettings(env: Record<string, string | undefined>): DeploymentSettings {
  const d = parseVariables(env, Object.keys(deploymentSchema.shape), deploymentSchema);
  return {
    readerUrl: d.SLUICE_READER_URL,
    readerQueues: d.SLUICE_READER_QUEUE,
    backfillQueue: d.SLUICE_BACKFILL_QUEUE,
    tasksServiceAccount: d.SLUICE_TASKS_SERVICE_ACCOUNT,
    retentionMarginMs: d.SLUICE_RETENTION_MARGIN_MS,
    idleDelayMs: d.SLUICE_IDLE_DELAY_MS,
    idleMaxDelayMs: Math.max(d.SLUICE_IDLE_DELAY_MS, d.SLUICE_IDLE_MAX_DELAY_MS),
    quietCheckpointMs: d.SLUICE_QUIET_CHECKPOINT_MS,
    requestPriority: d.SLUICE_REQUEST_PRIORITY,
    dispatchDeadlineSeconds: d.SLUICE_DISPATCH_DEADLINE_S,
    ...writerPrefixOf(env),
  };
}

/** The writer's dead-letter prefix when one is set (the writer validates it; here it is only read). */
export function writerPrefixOf(env: Record<string, string | undefined>): { writerDeadLetterPrefix?: string } {
  const prefix = env.SLUICE_WRITER_DEAD_LETTER_PREFIX?.trim();
  return prefix ? { writerDeadLetterPrefix: prefix } : {};
}
