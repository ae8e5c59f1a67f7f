/**
 * `npm start` flags, parsed once into typed options. Unknown flags, a flag missing its value and bad values
 * are refused with one line each and the usage; `--help` is answered before anything starts.
 */
import { z } from 'zod';
import { nearest } from '../shared/domain/suggest';
import { KNOWN_VARIABLES } from '../shared/wiring/variables';

const port = z.coerce.number().int().min(0).max(65_535).optional();

/** Flags that take no value. */
const SWITCHES = new Set(['help', 'noWorkload', 'backfill', 'logs', 'lineage']);
/** Flags that may be given more than once (each value is kept). */
const REPEATED = new Set(['env']);

const schema = z.strictObject({
  help: z.literal(true).optional(),
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
  logs: z.literal(true).optional(),
  lineage: z.literal(true).optional(),
  logFile: z.string().min(1).optional(),
  env: z.array(z.string().regex(/^SLUICE_[A-Z0-9_]+=/, 'must be SLUICE_<NAME>=<value>')).default([]),
  spannerPort: port,
  gcsPort: port,
  tasksPort: port,
  bigqueryPort: port,
  bigqueryWritePort: port,
  schedulerPort: port,
  readerPort: port,
  backfillPort: port,
  writerPort: port,
  dataDir: z.string().min(1).optional(),
});

/** The flag of each port option, for error messages (a busy port names the flag that asked for it). */
export const PORT_FLAGS = {
  spanner: '--spanner-port',
  gcs: '--gcs-port',
  tasks: '--tasks-port',
  bigqueryRest: '--bigquery-port',
  bigqueryWrite: '--bigquery-write-port',
  scheduler: '--scheduler-port',
  reader: '--reader-port',
  backfill: '--backfill-port',
  writer: '--writer-port',
} as const;

/** Parsed `npm start` options. */
export interface StartOptions {
  /** `--help`: print the usage and exit. */
  help: boolean;
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
  /** Print the functions' log lines on the terminal (they always go to the log file). */
  logs: boolean;
  /** `--lineage`: print every column edge of the lineage graph, not only the summary line. */
  lineage: boolean;
  /** Where the functions' log lines are written; default: a file in the system's temporary folder. */
  logFile?: string;
  /** `--env NAME=VALUE`: extra or overriding environment of the functions. */
  env: Record<string, string>;
  ports: Partial<Record<keyof typeof PORT_FLAGS, number>>;
  /** Keep every emulator's state in this directory across runs (default: in memory). */
  dataDir?: string;
}

/** Usage text. */
export const USAGE = `usage: npm start -- [options]
  --no-workload                 the stack and the demo schema only, for your own writes
  --dialect googlesql|postgresql
  --mode scheduled|continuous   SLUICE_MODE of the functions
  --duration <s>                run the workload that long, then catch up, verify and exit (default: until Ctrl-C)
  --seed <n>  --rate <txn/s>  --backfill  --tick-ms <ms>  --churn-ms <ms>  --catch-up-timeout <s>
  --env SLUICE_<NAME>=<value>   pass a setting to the functions (repeatable)
  --logs                        show the functions' log lines (always written to the log file)
  --log-file <path>             where the functions' log lines go
  --lineage                     list every column edge of the lineage graph (default: one summary line)
  --spanner-port <p> --gcs-port <p> --tasks-port <p> --bigquery-port <p> --bigquery-write-port <p>
  --scheduler-port <p> --reader-port <p> --backfill-port <p> --writer-port <p>
  --data-dir <dir>              keep every emulator's state in this directory across runs (default: memory)
  --help
exit codes: 0 BigQuery equals Spanner; 1 it differs or catch-up timed out; 2 bad flags or a busy port;
  3 the stack failed to start; 130 quit at once (a second Ctrl-C)`;

/** Error of a bad command line: one line per problem, then the usage. */
export class UsageError extends Error {
  constructor(readonly problems: string[]) {
    super(`${problems.join('\n')}\n${USAGE}`);
    this.name = 'UsageError';
  }
}

type RawFlags = Record<string, string | true | string[]>;

const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** Splits argv into flags; a value flag followed by nothing or by another flag is a problem. */
function readFlags(argv: string[], problems: string[]): RawFlags {
  const out: RawFlags = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--')) {
      problems.push(`unexpected argument ${JSON.stringify(arg)}: flags look like --duration 20`);
      continue;
    }
    const [flag, inline] = arg.includes('=')
      ? [arg.slice(2, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg.slice(2), undefined];
    const key = camel(flag);
    if (!(key in schema.shape)) {
      // An unknown flag is reported as such, and takes no value: what follows is read as the next flag.
      const near = nearest(key, Object.keys(schema.shape));
      problems.push(`--${flag}: unknown flag${near ? ` (did you mean --${kebab(near)}?)` : ''}`);
      continue;
    }
    if (SWITCHES.has(key)) {
      out[key] = true;
      continue;
    }
    let value = inline;
    if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) {
        problems.push(`--${flag} needs a value`);
        continue;
      }
      value = next;
      i++;
    }
    if (REPEATED.has(key)) out[key] = [...((out[key] as string[] | undefined) ?? []), value];
    else out[key] = value;
  }
  return out;
}

function envOf(pairs: string[], problems: string[]): Record<string, string> {
  const env = Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]));
  for (const name of Object.keys(env)) {
    if (KNOWN_VARIABLES.includes(name)) continue;
    const near = nearest(name, KNOWN_VARIABLES);
    problems.push(`--env: ${name} is not a sluice setting${near ? ` (did you mean ${near}?)` : ''}`);
  }
  return env;
}

/** Parses argv (after `npm start --`). @throws UsageError naming every problem. */
export function parseStartOptions(argv: string[]): StartOptions {
  const problems: string[] = [];
  const raw = readFlags(argv, problems);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    for (const i of parsed.error.issues) {
      if (i.code === 'unrecognized_keys') problems.push(...i.keys.map((k) => `--${kebab(k)}: unknown flag`));
      else problems.push(`--${kebab(String(i.path[0] ?? '?'))}: ${i.message}`);
    }
  }
  const env = parsed.success ? envOf(parsed.data.env, problems) : {};
  if (problems.length > 0 || !parsed.success) throw new UsageError(problems);
  const o = parsed.data;
  return {
    help: o.help === true,
    workload: !o.noWorkload,
    dialect: o.dialect === 'postgresql' ? 'POSTGRESQL' : 'GOOGLE_STANDARD_SQL',
    mode: o.mode,
    ...(o.duration !== undefined ? { durationSeconds: o.duration } : {}),
    ...(o.seed !== undefined ? { seed: o.seed } : {}),
    tickMs: o.tickMs,
    churnMs: o.churnMs,
    rate: o.rate,
    backfill: o.backfill === true,
    catchUpTimeoutSeconds: o.catchUpTimeout,
    logs: o.logs === true,
    lineage: o.lineage === true,
    ...(o.logFile !== undefined ? { logFile: o.logFile } : {}),
    env,
    ...(o.dataDir !== undefined ? { dataDir: o.dataDir } : {}),
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
