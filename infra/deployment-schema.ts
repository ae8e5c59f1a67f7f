/**
 * The deployment part of the stack configuration (everything under `sluice:*` except `sluice:pipeline`):
 * sizing, queue rates, schedule, alerts, optional features. The pipeline part is validated by the shared
 * pipeline schema instead (see `settings.ts`), so the functions and the deployment agree on one definition.
 */
import { z } from 'zod';

/** Names of the four deployed functions, also their entry points. */
export const FUNCTION_NAMES = ['scheduler', 'reader', 'backfill', 'writer'] as const;
/** One of the deployed functions. */
export type FunctionName = (typeof FUNCTION_NAMES)[number];

/** Ingress a function accepts: never `ALLOW_ALL` without IAM (the program never grants a public invoker). */
const ingress = z.enum(['ALLOW_INTERNAL_ONLY', 'ALLOW_ALL', 'ALLOW_INTERNAL_AND_GCLB']);

/** Cloud Run memory strings the platform accepts for functions (binary units only, to avoid surprises). */
const memory = z.string().regex(/^(128|256|512)Mi$|^[1-9][0-9]?Gi$/, 'memory like 256Mi, 512Mi, 1Gi, 2Gi');

const functionSizing = z
  .object({
    memory: memory.optional(),
    cpu: z.number().positive().max(8).optional(),
    minInstances: z.number().int().min(0).max(10).optional(),
    maxInstances: z.number().int().min(1).max(1000).optional(),
    concurrency: z.number().int().min(1).max(1000).optional(),
    timeoutSeconds: z.number().int().min(15).max(1800).optional(),
    ingress: ingress.optional(),
  })
  .strict();

const queueOverrides = z
  .object({
    maxDispatchesPerSecond: z.number().positive().max(500).optional(),
    maxConcurrentDispatches: z.number().int().min(1).max(5000).optional(),
    maxAttempts: z.number().int().min(-1).max(1000).optional(),
    minBackoffSeconds: z.number().min(0.1).max(3600).optional(),
    maxBackoffSeconds: z.number().min(0.1).max(3600).optional(),
    maxDoublings: z.number().int().min(0).max(16).optional(),
  })
  .strict();

/** An IAM member that names one principal: public principals are rejected here, not only in tests. */
const member = z
  .string()
  .regex(/^(user|group|serviceAccount|domain):[^\s]+$/, 'an IAM member like group:data-eng@example.com')
  .refine((m) => !/allUsers|allAuthenticatedUsers/.test(m), 'public principals are not allowed');

const topic = z
  .string()
  .regex(
    /^projects\/[a-z][a-z0-9-]{4,28}[a-z0-9]\/topics\/[A-Za-z][\w.~+%-]{2,254}$/,
    'a full topic name projects/<p>/topics/<t>',
  );

/** An optional push subscription of the writer to a topic whose messages are `{"mutations": [...]}`. */
const writerPubSub = z
  .object({
    topic,
    /** Pub/Sub redelivers a message the writer has not answered within this; at most 600 s. */
    ackDeadlineSeconds: z.number().int().min(10).max(600).default(600),
    minBackoffSeconds: z.number().int().min(0).max(600).default(10),
    maxBackoffSeconds: z.number().int().min(0).max(600).default(600),
    /** Messages answered non-2xx this many times go to this topic instead of being redelivered forever. */
    deadLetterTopic: topic.optional(),
    maxDeliveryAttempts: z.number().int().min(5).max(100).default(5),
  })
  .strict();

/** The writer function's settings (`sluice:writer`). */
const writerSchema = z
  .object({
    /** IAM members allowed to POST mutations (services, groups); never public. */
    invokers: z.array(member).default([]),
    deadLetterPrefix: z
      .string()
      .regex(/^[A-Za-z0-9._\-/]{1,200}\/$/, 'an object name prefix ending with /')
      .optional(),
    constraintViolationPolicy: z.enum(['fail', 'route-to-failure-handler']).default('fail'),
    ordering: z.enum(['none', 'per-key']).default('none'),
    maxBatchCells: z.number().int().min(1).max(1_000_000).optional(),
    maxBatchMutations: z.number().int().min(1).max(1_000_000).optional(),
    maxBatchBytes: z
      .number()
      .int()
      .min(1024)
      .max(200 * 1024 * 1024)
      .optional(),
    pubsub: writerPubSub.optional(),
  })
  .strict();

/** zod schema of the deployment keys (`sluice:<key>`), all optional with safe defaults. */
export const deploymentSchema = z
  .object({
    prefix: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,13}[a-z0-9]$/, 'lowercase letters, digits and dashes, 2-15 characters')
      .default('sluice'),
    functions: z
      .object({
        scheduler: functionSizing,
        reader: functionSizing,
        backfill: functionSizing,
        writer: functionSizing,
      })
      .partial()
      .strict()
      .default({}),
    queues: z
      .object({
        reader: queueOverrides.extend({
          /**
           * Reader queues to spread the partitions over (by partition id): a queue dispatches at most 5,000
           * tasks at once, and a continuous window holds its dispatch for the whole long poll.
           */
          shards: z.number().int().min(1).max(50).optional(),
        }),
        backfill: queueOverrides,
      })
      .partial()
      .strict()
      .default({}),
    schedule: z
      .object({
        cron: z.string().min(9).default('* * * * *'),
        timeZone: z.string().min(1).default('Etc/UTC'),
      })
      .strict()
      .default({ cron: '* * * * *', timeZone: 'Etc/UTC' }),
    alerts: z
      .object({
        lagSeconds: z.number().int().min(30).max(86_400).default(600),
        notificationChannels: z
          .array(z.string().regex(/^projects\/[^/]+\/notificationChannels\/[^/]+$/))
          .default([]),
      })
      .strict()
      .default({ lagSeconds: 600, notificationChannels: [] }),
    dataBoost: z.boolean().default(false),
    demoDatabase: z.boolean().default(false),
    operators: z.array(member).default([]),
    ledger: z
      .object({
        location: z.string().min(2).optional(),
        softDeleteDays: z.union([z.literal(0), z.number().int().min(7).max(90)]).default(0),
        noncurrentDays: z.number().int().min(1).max(365).default(3),
        finishedJobsAgeDays: z.number().int().min(1).max(3650).default(30),
        forceDestroy: z.boolean().default(false),
      })
      .strict()
      .default({ softDeleteDays: 0, noncurrentDays: 3, finishedJobsAgeDays: 30, forceDestroy: false }),
    dataset: z
      .object({
        location: z.string().min(2).optional(),
        deleteContentsOnDestroy: z.boolean().default(false),
      })
      .strict()
      .default({ deleteContentsOnDestroy: false }),
    writer: writerSchema.prefault({}),
    /** Lineage run events: always logged; with `target: api` also sent to the Data Lineage API. */
    lineage: z
      .object({
        target: z.enum(['log', 'api']).default('log'),
        /** The Data Lineage API location (defaults to the region). */
        location: z.string().min(2).optional(),
        heartbeatSeconds: z.number().int().min(10).max(86_400).default(300),
      })
      .strict()
      .default({ target: 'log', heartbeatSeconds: 300 }),
  })
  .strict();

/** The deployment keys after defaults. */
export type DeploymentConfig = z.infer<typeof deploymentSchema>;
/** Per-function overrides as written in the stack file. */
export type FunctionSizingInput = z.infer<typeof functionSizing>;
/** The writer's settings after defaults. */
export type WriterDeploymentConfig = z.infer<typeof writerSchema>;
/** Per-queue overrides as written in the stack file. */
export type QueueOverrides = z.infer<typeof queueOverrides>;

/** Every `sluice:*` key besides `pipeline`. */
export const DEPLOYMENT_KEYS: readonly string[] = Object.keys(deploymentSchema.shape);

/** Every `sluice:*` key the program reads; any other is refused. */
export const STACK_KEYS: readonly string[] = ['pipeline', ...DEPLOYMENT_KEYS];
