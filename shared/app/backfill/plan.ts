/**
 * Starting a backfill: validate the request against the pipeline, open one batch read-only transaction at
 * T, let Spanner partition each table's query, store the job and its partitions, and enqueue one task per
 * partition. Nothing is started (no job, no task) unless the whole request is valid.
 */
import { randomUUID } from 'node:crypto';
import { type BackfillJob, JOB_FORMAT, type JobOrigin, type JobPartition } from '../../domain/backfill/job';
import {
  type BackfillRequest,
  type Checked,
  type ResolvedTable,
  resolveTables,
} from '../../domain/backfill/request';
import { isSnapshotTooOld, snapshotTooOldError } from '../../domain/backfill/snapshot-errors';
import { SluiceError } from '../../domain/errors';
import type { ChangeStreamScope, TableSchema } from '../../domain/information-schema';
import { planReplica } from '../../domain/replica-plan';
import { destinationClashesOf, targetsFor } from '../../domain/table-rules';
import { formatTimestamp, type Timestamp } from '../../domain/timestamp';
import type { Snapshot } from '../../ports/snapshot-source';
import { watchedColumns, withEnrichedColumns } from '../tables';
import type { BackfillDeps } from './deps';
import { JobStore } from './job-store';
import { backfillLookups } from './lookups';
import { finishPlanning } from './resume';

/** Who starts the backfill, and (for callers that must be idempotent, like the scheduler) its id. */
export interface StartOptions {
  origin?: JobOrigin;
  id?: string;
}

/** A clock skew allowance: a `readTimestamp` slightly ahead of this instance's clock is still accepted. */
const FUTURE_SKEW_NS = 1_000_000_000n;

/** The schema of each requested table that exists; a table the catalog cannot find is left out. */
async function existingSchemas(deps: BackfillDeps, tables: string[]): Promise<Map<string, TableSchema>> {
  const schemas = new Map<string, TableSchema>();
  for (const name of tables) {
    try {
      schemas.set(name, await deps.catalog.tableSchema(name));
    } catch (err) {
      // The catalog reports a missing table as "not found"; anything else (e.g. UNAVAILABLE) is a real error.
      if (!/not found|no columns|does not exist/i.test((err as Error).message ?? '')) throw err;
    }
  }
  return schemas;
}

async function validate(deps: BackfillDeps, request: BackfillRequest): Promise<Checked<ResolvedTable[]>> {
  const stream = deps.config.spanner.stream;
  const problems: string[] = [];
  if (request.readTimestamp !== undefined && request.readTimestamp > deps.now() + FUTURE_SKEW_NS) {
    problems.push(`readTimestamp: ${formatTimestamp(request.readTimestamp)} is in the future`);
  }
  const scope = await deps.catalog.streamScope(stream);
  if (!scope) return { ok: false, problems: [...problems, `change stream ${stream} does not exist`] };
  const schemas = await existingSchemas(deps, request.tables);
  const resolved = resolveTables(request, {
    configured: (table) => targetsFor(deps.config, table),
    scope,
    streamName: stream,
    schemas,
  });
  if (!resolved.ok) return { ok: false, problems: [...problems, ...resolved.problems] };
  problems.push(...(await clashProblems(deps, request.tables, scope)));
  return problems.length > 0 ? { ok: false, problems } : resolved;
}

/** Requested tables another watched table would share a BigQuery table with (ADR-1405): never loaded. */
async function clashProblems(
  deps: BackfillDeps,
  tables: string[],
  scope: ChangeStreamScope,
): Promise<string[]> {
  const watched = (await deps.catalog.tableSchemas())
    .map((s) => s.name)
    .filter((n) => watchedColumns(scope, n) !== undefined);
  return [...new Set(tables.flatMap((t) => destinationClashesOf(deps.config, t, watched)))];
}

/** Opens the snapshot; a `readTimestamp` older than the version retention is the caller's mistake. */
async function openSnapshot(deps: BackfillDeps, at: Timestamp | undefined): Promise<Checked<Snapshot>> {
  try {
    return { ok: true, value: await deps.snapshots.open(at) };
  } catch (err) {
    if (at === undefined || !isSnapshotTooOld(err)) throw err;
    const dialect = await deps.catalog.dialect();
    return {
      ok: false,
      problems: [`readTimestamp: ${snapshotTooOldError(at, dialect, deps.config.spanner.database).message}`],
    };
  }
}

/** The problems of the tables' lookups as a backfill applies them (at the snapshot timestamp). */
async function lookupProblems(deps: BackfillDeps, tables: ResolvedTable[], at: Timestamp): Promise<string[]> {
  const problems: string[] = [];
  for (const t of tables)
    await backfillLookups(deps, t.schema, at, t.columns).catch((err: unknown) => {
      if (!(err instanceof SluiceError) || err.kind !== 'permanent') throw err;
      problems.push(err.message);
    });
  return problems;
}

async function ensureSinks(deps: BackfillDeps, tables: ResolvedTable[], at: Timestamp): Promise<void> {
  for (const t of tables) {
    const lookups = await backfillLookups(deps, t.schema, at, t.columns);
    const enriched = withEnrichedColumns(planReplica(t.schema, t.watched), lookups);
    // Fresh: a table deleted under the pipeline is recreated here (the repair its failure names, ADR-1515).
    if (t.replica)
      await deps.replica.ensureTable(t.replica, enriched.schema, enriched.watched, { fresh: true });
    if (t.history) await deps.history.ensureTable(t.history, enriched.fields, { fresh: true });
  }
}

async function partitionTables(
  deps: BackfillDeps,
  snapshot: Snapshot,
  tables: ResolvedTable[],
  request: BackfillRequest,
): Promise<{ jobTables: BackfillJob['tables']; partitions: JobPartition[] }> {
  const partitions: JobPartition[] = [];
  const jobTables: BackfillJob['tables'] = [];
  for (const t of tables) {
    const handles = await deps.snapshots.partition(snapshot, {
      table: t.schema,
      columns: t.columns,
      dataBoost: request.dataBoost ?? deps.dataBoostDefault ?? false,
      priority: request.priority ?? 'medium',
      ...(request.maxPartitions ? { maxPartitions: request.maxPartitions } : {}),
    });
    const { name, schema, columns, replica, history } = t;
    jobTables.push({
      name,
      schema,
      columns,
      ...(replica ? { replica } : {}),
      ...(history ? { history } : {}),
      firstPartition: partitions.length,
      partitions: handles.length,
    });
    for (const handle of handles) partitions.push({ index: partitions.length, table: name, handle });
  }
  return { jobTables, partitions };
}

function targetsOf(tables: ResolvedTable[]): BackfillJob['targets'] {
  const targets: BackfillJob['targets'] = [];
  if (tables.some((t) => t.replica)) targets.push('replica');
  if (tables.some((t) => t.history)) targets.push('history');
  return targets;
}

/** The job object before it is stored: state `planning`, partitions counted, nothing started. */
function planningJob(
  deps: BackfillDeps,
  request: BackfillRequest,
  options: StartOptions,
  planned: { snapshot: Snapshot; tables: ResolvedTable[]; jobTables: BackfillJob['tables']; count: number },
): BackfillJob {
  return {
    format: JOB_FORMAT,
    id: options.id ?? deps.newId(),
    pipeline: deps.config.pipeline,
    origin: options.origin ?? 'http',
    state: 'planning',
    snapshot: planned.snapshot,
    plan: randomUUID().replaceAll('-', '').slice(0, 16),
    dataBoost: request.dataBoost ?? deps.dataBoostDefault ?? false,
    priority: request.priority ?? 'medium',
    targets: targetsOf(planned.tables),
    tables: planned.jobTables,
    partitions: planned.count,
    createdAt: deps.now(),
    startedAt: null,
    finishedAt: null,
    error: null,
  };
}

/** An existing job of a deterministic id, finished planning if a crash left it there. */
async function existingJob(deps: BackfillDeps, jobs: JobStore, id: string | undefined) {
  const job = id === undefined ? undefined : await jobs.read(id);
  return job && finishPlanning(deps, jobs, job);
}

/**
 * Starts a backfill: the entry point of `POST /backfills`, of `startAt: "snapshot"` (backfill every replica
 * table at T, then start the stream at T + 1 ns) and of the retention fallback `restart-and-backfill`.
 * Returns the running job (T is `job.snapshot.readTimestamp`), or the problems that make the request
 * invalid — then nothing was started. With `options.id`, a job of that id that already exists (an earlier
 * or concurrent call) is returned instead of starting another: the caller gets the same T every time.
 */
export async function startBackfill(
  deps: BackfillDeps,
  request: BackfillRequest,
  options: StartOptions = {},
): Promise<Checked<BackfillJob>> {
  const jobs = new JobStore(deps.store, deps.config.pipeline);
  const earlier = await existingJob(deps, jobs, options.id);
  if (earlier) return { ok: true, value: earlier };
  const tables = await validate(deps, request);
  if (!tables.ok) return tables;
  const opened = await openSnapshot(deps, request.readTimestamp);
  if (!opened.ok) return opened;
  const snapshot = opened.value;
  const problems = await lookupProblems(deps, tables.value, snapshot.readTimestamp);
  if (problems.length > 0) {
    await deps.snapshots.close(snapshot).catch(() => undefined);
    return { ok: false, problems };
  }
  await ensureSinks(deps, tables.value, snapshot.readTimestamp);
  const { jobTables, partitions } = await partitionTables(deps, snapshot, tables.value, request);
  const planned = { snapshot, tables: tables.value, jobTables, count: partitions.length };
  const planning = planningJob(deps, request, options, planned);
  // Partitions first, job last: a stored job always has every partition, so it can always be finished.
  await jobs.writePartitions(planning.id, planning.plan, partitions, planning.createdAt);
  if (!(await jobs.create(planning))) {
    await deps.snapshots.close(snapshot).catch(() => undefined);
    const raced = await existingJob(deps, jobs, planning.id);
    if (raced) return { ok: true, value: raced };
  }
  const job = await finishPlanning(deps, jobs, planning);
  deps.log.info('backfill.started', {
    job: job.id,
    origin: job.origin,
    snapshotTimestamp: formatTimestamp(job.snapshot.readTimestamp),
    partitions: partitions.length,
    tables: job.tables.map((t) => t.name),
  });
  // Stamped with the job's own start: a fast worker's COMPLETE may reach the service first.
  await deps.lineage?.report(job, 'START', job.startedAt ?? job.createdAt);
  return { ok: true, value: job };
}
