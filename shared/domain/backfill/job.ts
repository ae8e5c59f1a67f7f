/**
 * A backfill job as stored in the ledger bucket: one snapshot (batch read-only transaction at T), the tables
 * it loads, and how many partitions Spanner chose. Object layout under `<pipeline>/backfills/<id>/`:
 * `plans/<plan>/<n>.json` (the partitions, written once before the job object exists), `job.json` (created
 * last, so a stored job always has all its partitions; compare-and-swap on state changes) and `done/<n>.json`
 * (create-only marker per finished partition, with its row count in metadata so progress is one listing).
 * The plan token keeps two planners racing on one deterministic id from mixing their partition handles.
 */
import { z } from 'zod';
import { SluiceError } from '../errors';
import type { TableSchema } from '../information-schema';
import { formatTimestamp, type Timestamp } from '../timestamp';
import { describeIssues, timestampString } from '../zod-helpers';
import type { BackfillPriority, BackfillTarget } from './request';

/** Format marker of job objects; a reader refuses formats it does not know. */
export const JOB_FORMAT = 'sluice.backfill/1';

/** Lifecycle of a job. `cancelled` is terminal like `succeeded` and `failed`. */
export type JobState = 'planning' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** Who asked for the backfill. */
export type JobOrigin = 'http' | 'start-at-snapshot' | 'retention-fallback';

/** One table of a job; its partitions are numbered `firstPartition … firstPartition + partitions − 1`. */
export interface JobTable {
  name: string;
  schema: TableSchema;
  columns: string[];
  replica?: string;
  history?: string;
  firstPartition: number;
  partitions: number;
}

/** A backfill job. */
export interface BackfillJob {
  format: typeof JOB_FORMAT;
  id: string;
  pipeline: string;
  origin: JobOrigin;
  state: JobState;
  snapshot: { transaction: string; readTimestamp: Timestamp };
  /** Token of the planning attempt whose partition objects this job uses. */
  plan: string;
  dataBoost: boolean;
  priority: BackfillPriority;
  targets: BackfillTarget[];
  tables: JobTable[];
  /** Total partitions over all tables. */
  partitions: number;
  createdAt: Timestamp;
  startedAt: Timestamp | null;
  finishedAt: Timestamp | null;
  error: string | null;
}

/** One partition of a job: which table, and Spanner's opaque partition handle. */
export interface JobPartition {
  index: number;
  table: string;
  handle: string;
}

const count = z.number().int().min(0);
const spannerType: z.ZodType<TableSchema['columns'][number]['type']> = z.lazy(() =>
  z.strictObject({
    code: z.string(),
    arrayElementType: spannerType.optional(),
    typeAnnotation: z.string().optional(),
    protoTypeFqn: z.string().optional(),
  }),
);
const schemaSchema = z.strictObject({
  name: z.string(),
  columns: z.array(
    z.strictObject({ name: z.string(), type: spannerType, nullable: z.boolean(), ordinalPosition: count }),
  ),
  primaryKey: z.array(z.string()),
});
const jobSchema = z.strictObject({
  format: z.literal(JOB_FORMAT),
  id: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/),
  pipeline: z.string().min(1),
  origin: z.enum(['http', 'start-at-snapshot', 'retention-fallback']),
  state: z.enum(['planning', 'running', 'succeeded', 'failed', 'cancelled']),
  snapshot: z.strictObject({ transaction: z.string(), readTimestamp: timestampString }),
  plan: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/),
  dataBoost: z.boolean(),
  priority: z.enum(['low', 'medium', 'high']),
  targets: z.array(z.enum(['replica', 'history'])),
  tables: z.array(
    z.strictObject({
      name: z.string(),
      schema: schemaSchema,
      columns: z.array(z.string()),
      replica: z.string().optional(),
      history: z.string().optional(),
      firstPartition: count,
      partitions: count,
    }),
  ),
  partitions: count,
  createdAt: timestampString,
  startedAt: timestampString.nullable(),
  finishedAt: timestampString.nullable(),
  error: z.string().nullable(),
});
const partitionSchema = z.strictObject({ index: count, table: z.string(), handle: z.string() });

function jsonTimestamps(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? formatTimestamp(value as Timestamp) : value;
}

/** Serialises a job (timestamps as RFC 3339 with nine fractional digits). */
export function encodeJob(job: BackfillJob): Buffer {
  return Buffer.from(JSON.stringify(job, jsonTimestamps));
}

function parseJson<T>(what: string, data: Buffer, schema: z.ZodType<T>): T {
  let raw: unknown;
  try {
    raw = JSON.parse(data.toString('utf8'));
  } catch (err) {
    throw new SluiceError('permanent', `corrupt ${what}: ${(err as Error).message}`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    throw new SluiceError('permanent', `corrupt ${what}: ${describeIssues(parsed.error).join('; ')}`);
  return parsed.data;
}

/** Parses a stored job. @throws SluiceError (permanent) naming every problem. */
export function decodeJob(data: Buffer): BackfillJob {
  return parseJson('backfill job', data, jobSchema) as BackfillJob;
}

/** Serialises a partition. */
export function encodePartition(partition: JobPartition): Buffer {
  return Buffer.from(JSON.stringify(partition));
}

/** Parses a stored partition. */
export function decodePartition(data: Buffer): JobPartition {
  return parseJson('backfill partition', data, partitionSchema);
}

/**
 * The one PENDING history stream of a backfill partition (ADR-1601): written when the stream is complete and
 * finalized, before it is committed, so every delivery of the task commits the same stream.
 */
export interface HistoryClaim {
  stream: string;
  /** History rows in the stream. */
  historyRows: number;
  /** Snapshot rows of the partition (what its done marker records). */
  rows: number;
  /**
   * How far the commit got (ADR-2111): `sent` is written before BatchCommit is called, `done` once it answered
   * committed. BigQuery forgets streams, so only this record tells a committed stream from an expired one.
   */
  commit?: 'sent' | 'done';
}

const historyClaimSchema = z.strictObject({
  stream: z.string().min(1),
  historyRows: z.number().int().min(0),
  rows: z.number().int().min(0),
  commit: z.enum(['sent', 'done']).optional(),
});

/** Parses a stored history claim. */
export function decodeHistoryClaim(data: Buffer): HistoryClaim {
  return parseJson('backfill history claim', data, historyClaimSchema);
}

/** Object names of a job, under the ledger's pipeline prefix. */
export const jobObjects = {
  prefix: (pipeline: string) => `${pipeline}/backfills/`,
  job: (pipeline: string, id: string) => `${pipeline}/backfills/${id}/job.json`,
  partition: (pipeline: string, id: string, plan: string, index: number) =>
    `${pipeline}/backfills/${id}/plans/${plan}/${String(index).padStart(6, '0')}.json`,
  donePrefix: (pipeline: string, id: string) => `${pipeline}/backfills/${id}/done/`,
  done: (pipeline: string, id: string, index: number) =>
    `${pipeline}/backfills/${id}/done/${String(index).padStart(6, '0')}.json`,
  /** The history stream a partition's rows were written to, claimed create-only before it is committed. */
  historyClaim: (pipeline: string, id: string, index: number) =>
    `${pipeline}/backfills/${id}/history/${String(index).padStart(6, '0')}.json`,
  /** The index of jobs (ADR-2308): one small entry per job, named so that name order is newest first. */
  indexPrefix: (pipeline: string) => `${pipeline}/backfill-index/`,
  indexEntry: (pipeline: string, id: string, createdAt: Timestamp) =>
    `${pipeline}/backfill-index/${newestFirst(createdAt)}-${id}.json`,
  /** Written once the index holds every job created before it existed (the upgrade's one full listing). */
  indexBuilt: (pipeline: string) => `${pipeline}/backfill-index.built`,
};

const LATEST_NANOS = 10n ** 20n - 1n;

/** The creation time as 20 digits that sort newest first (nanoseconds subtracted from 10^20 - 1). */
function newestFirst(createdAt: Timestamp): string {
  return (LATEST_NANOS - (createdAt as bigint)).toString().padStart(20, '0');
}

/** The job id of an index entry's name (`<20 digits>-<id>.json`), or undefined for another name. */
export function indexEntryId(pipeline: string, name: string): string | undefined {
  const rest = name.slice(jobObjects.indexPrefix(pipeline).length);
  return /^\d{20}-([A-Za-z0-9_-]{1,100})\.json$/.exec(rest)?.[1];
}

/** Metadata key of a done marker holding the partition's row count. */
export const DONE_ROWS_KEY = 'sluice-rows';

/**
 * Deterministic Cloud Tasks id of a partition: a duplicate enqueue collapses. The short hash prefix spreads
 * ids over the queue's key space (sequential names slow Cloud Tasks down).
 */
export function partitionTaskId(jobId: string, index: number): string {
  let h = 2166136261;
  for (const c of `${jobId}/${index}`) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
  return `${h.toString(16).padStart(8, '0')}-backfill-${jobId}-${index}`;
}

/** The body of a partition task. */
export interface PartitionTask {
  pipeline: string;
  job: string;
  partition: number;
}

const taskSchema = z.strictObject({
  pipeline: z.string().min(1),
  job: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/),
  partition: count,
});

/** Parses a partition task body; a malformed one is `invalid-input`. */
export function parsePartitionTask(body: unknown): PartitionTask {
  const parsed = taskSchema.safeParse(body);
  if (!parsed.success) {
    throw new SluiceError('invalid-input', `bad backfill task: ${describeIssues(parsed.error).join('; ')}`);
  }
  return parsed.data;
}
