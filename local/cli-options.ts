/**
 * `npm start` flags, parsed once into typed options (unknown flags and bad values are refused with the
 * list of what is accepted).
 */
import { z } from 'zod';
import { type CliOptions, parseFlags } from './emulators/cli';

const port = z.coerce.number().int().min(0).max(65_535).optional();

const schema = z.strictObject({
  workload: z.boolean().default(true),
  noWorkload: z.literal(true).optional(),
  dialect: z.enum(['googlesql', 'postgresql']).default('googlesql'),
  mode: z.enum(['scheduled', 'continuous']).default('scheduled'),
  duration: z.coerce.number().positive().optional(),
  seed: z.coerce.number().int().min(0).optional(),
  tickMs: z.coerce.number().int().min(100).default(2_000),
  churnMs: z.coerce.number().int().min(0).default(4_000),
  rate: z.coerce.number().positive().default(10),
  backfill: z.literal(true).optional(),
  catchUpTimeout: z.coerce.number().positive().default(120),
  spannerPort: port,
  gcsPort: port,
  tasksPort: port,
  bigqueryPort: port,
  bigqueryWritePort: port,
  schedulerPort: port,
  readerPort: port,
  backfillPort: port,
  writerPort: port,
});

/** Parsed `npm start` options. */
export interface StartOptions {
  workload: boolean;
  dialect: 'GOOGLE_STANDARD_SQL' | 'POSTGRESQL';
  mode: 'scheduled' | 'continuous';
  /** Seconds of workload before catch-up and verification; undefined: until Ctrl-C. */
  durationSeconds?: number;
  seed?: number;
  tickMs: number;
  churnMs: number;
  /** Workload transactions per second. */
  rate: number;
  /** Pre-fill the products table and backfill it. */
  backfill: boolean;
  catchUpTimeoutSeconds: number;
  ports: Record<string, number | undefined>;
}

/** Usage text. */
export const USAGE = `usage: npm start -- [--no-workload] [--dialect googlesql|postgresql] [--mode scheduled|continuous]
  [--duration <s>] [--seed <n>] [--rate <txn/s>] [--backfill] [--tick-ms <ms>] [--churn-ms <ms>]
  [--catch-up-timeout <s>] [--spanner-port <p>] [--gcs-port <p>] [--tasks-port <p>] [--bigquery-port <p>]
  [--bigquery-write-port <p>] [--scheduler-port <p>] [--reader-port <p>] [--backfill-port <p>]
  [--writer-port <p>]`;

/** Parses argv (after `npm start --`). */
export function parseStartOptions(argv: string[]): StartOptions {
  const raw: CliOptions = parseFlags(argv);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `  --${i.path.join('.') || '?'}: ${i.message}`);
    throw new Error(`${issues.join('\n')}\n${USAGE}`);
  }
  const o = parsed.data;
  return {
    workload: o.workload && !o.noWorkload,
    dialect: o.dialect === 'postgresql' ? 'POSTGRESQL' : 'GOOGLE_STANDARD_SQL',
    mode: o.mode,
    ...(o.duration !== undefined ? { durationSeconds: o.duration } : {}),
    ...(o.seed !== undefined ? { seed: o.seed } : {}),
    tickMs: o.tickMs,
    churnMs: o.churnMs,
    rate: o.rate,
    backfill: o.backfill === true,
    catchUpTimeoutSeconds: o.catchUpTimeout,
    ports: {
      spanner: o.spannerPort,
      gcs: o.gcsPort,
      tasks: o.tasksPort,
      bigqueryRest: o.bigqueryPort,
      bigqueryWrite: o.bigqueryWritePort,
      scheduler: o.schedulerPort,
      reader: o.readerPort,
      backfill: o.backfillPort,
      writer: o.writerPort,
    },
  };
}
