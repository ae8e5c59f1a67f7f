/**
 * First-run validation of the change stream against the configuration (DESIGN §4 "Startup validation"): the
 * stream exists, watches every explicitly configured table, every such table exists, and has a supported
 * partition mode. Every problem
 * is reported at once, each naming its fix. Options that hide changes are checked on every tick and window
 * (see stream-guard.ts): they refuse a new pipeline and stop a running one. The capture type is not refused:
 * the replica path decides per record, reading the row at its commit timestamp where the record lacks it.
 */

import { capturesFullRow, type Dialect } from '../../../domain/change-record';
import type { PipelineConfig } from '../../../domain/config';
import { SluiceError } from '../../../domain/errors';
import {
  type ChangeStreamOptions,
  type ChangeStreamScope,
  TableNotFoundError,
  type TableSchema,
} from '../../../domain/information-schema';
import type { Logger } from '../../../domain/log';
import { hidingOptions } from '../../../domain/stream-options';
import { destinationClashes } from '../../../domain/table-rules';
import type { SpannerCatalog } from '../../../ports/spanner-catalog';
import { resolveTableLookups, watchedColumns } from '../../tables';

/** What validation learned: the scope to log and the options (retention) the scheduler keeps. */
export interface ValidatedStream {
  scope: ChangeStreamScope;
  options: ChangeStreamOptions;
  dialect: Dialect;
  /** Explicitly configured table → watched columns (`all` or the list). */
  watched: Map<string, 'all' | string[]>;
}

/** The table's schema, or undefined when the database lacks it; other failures (transient ones) are thrown. */
async function existingSchema(catalog: SpannerCatalog, table: string): Promise<TableSchema | undefined> {
  try {
    return await catalog.tableSchema(table);
  } catch (err) {
    if (err instanceof TableNotFoundError) return undefined;
    throw err;
  }
}

/** The problems of a table's lookups (docs/enrichment.md), one line each; none when they resolve. */
async function lookupProblems(catalog: SpannerCatalog, fact: TableSchema, config: PipelineConfig) {
  try {
    await resolveTableLookups(catalog, fact, config.tables[fact.name]?.lookups ?? []);
    return [];
  } catch (err) {
    if (!(err instanceof SluiceError) || err.kind !== 'permanent') throw err;
    return [err.message];
  }
}

/** Every table the database has that the stream watches (the names the all-tables rule may apply to). */
async function watchedTables(catalog: SpannerCatalog, scope: ChangeStreamScope): Promise<string[]> {
  const schemas = await catalog.tableSchemas();
  return schemas.map((s) => s.name).filter((name) => watchedColumns(scope, name) !== undefined);
}

/**
 * PostgreSQL's default schema is `public`, and Spanner names its tables without it (`t`, in change records
 * too): an entry `public.t` would never meet a record, so it is refused with the name to write.
 */
function namingProblems(config: PipelineConfig, dialect: Dialect): string[] {
  if (dialect !== 'POSTGRESQL') return [];
  return [...Object.keys(config.tables), ...config.excludedTables]
    .filter((t) => t.startsWith('public.'))
    .map(
      (t) =>
        `SLUICE_TABLES names ${t}: tables of PostgreSQL's default schema are named without "public." — write "${t.slice('public.'.length)}"`,
    );
}

/** Checks the stream; @throws SluiceError (`permanent`) listing every problem and its fix. */
export async function validateStream(
  catalog: SpannerCatalog,
  config: PipelineConfig,
): Promise<ValidatedStream> {
  const stream = config.spanner.stream;
  const scope = await catalog.streamScope(stream);
  if (!scope) {
    throw new SluiceError(
      'permanent',
      `change stream ${stream} does not exist in database ${config.spanner.database}: create it (CREATE CHANGE STREAM ${stream} FOR ...) or fix SLUICE_SPANNER_STREAM`,
    );
  }
  const [options, dialect] = await Promise.all([catalog.streamOptions(stream), catalog.dialect()]);
  const problems: string[] = [];
  const watched = new Map<string, 'all' | string[]>();
  for (const table of Object.keys(config.tables)) {
    const columns = watchedColumns(scope, table);
    if (columns === undefined)
      problems.push(
        `table ${table} is not watched by ${stream}: add it to the stream or remove it from SLUICE_TABLES`,
      );
    else watched.set(table, columns);
    const schema = await existingSchema(catalog, table);
    if (!schema)
      problems.push(
        `table ${table} does not exist in database ${config.spanner.database}: create it, or remove it from SLUICE_TABLES`,
      );
    else problems.push(...(await lookupProblems(catalog, schema, config)));
  }
  problems.push(...namingProblems(config, dialect));
  problems.push(...destinationClashes(config, await watchedTables(catalog, scope)));
  if (options.partitionMode === 'MUTABLE_KEY_RANGE') {
    problems.push(
      `partition_mode MUTABLE_KEY_RANGE is not supported yet: use a stream with partition_mode = 'IMMUTABLE_KEY_RANGE'`,
    );
  }
  if (problems.length > 0) {
    throw new SluiceError(
      'permanent',
      `change stream ${stream} cannot be replicated:\n  - ${problems.join('\n  - ')}`,
    );
  }
  return { scope, options, dialect, watched };
}

/** The validated stream as one log line: options, what they hide and what was accepted, the scope. */
export function logValidated(log: Logger, config: PipelineConfig, v: ValidatedStream): void {
  const wantsReplica =
    Object.values(config.tables).some((t) => t.replica !== undefined) ||
    config.allTables?.replica !== undefined;
  log.info('stream.validated', {
    stream: config.spanner.stream,
    valueCaptureType: v.options.valueCaptureType,
    retentionSeconds: v.options.retentionSeconds,
    partitionMode: v.options.partitionMode,
    options: v.options.raw,
    hidingAccepted: hidingOptions(v.options.raw),
    watchesAllTables: v.scope.all,
    watched: Object.fromEntries(v.watched),
    allTables: config.allTables,
    excludedTables: config.excludedTables,
  });
  if (wantsReplica && !capturesFullRow(v.options.valueCaptureType)) {
    log.warn('stream.capture-type', {
      valueCaptureType: v.options.valueCaptureType,
      note: "records do not hold full rows: replica rows are read at each change's commit timestamp, which must stay within the database's version_retention_period (default 1 h) — a pipeline lagging longer fails those reads. NEW_ROW or NEW_ROW_AND_OLD_VALUES avoids the reads",
    });
  }
}
