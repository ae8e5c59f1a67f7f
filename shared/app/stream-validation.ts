/**
 * First-run validation of the change stream against the configuration (DESIGN §4 "Startup validation"): the
 * stream exists, watches every configured table, has a value capture type the configured sinks can use, and a
 * supported partition mode. Every problem is reported at once, each naming its fix.
 */

import { capturesFullRow } from '../domain/change-record';
import type { PipelineConfig } from '../domain/config';
import { SluiceError } from '../domain/errors';
import type { ChangeStreamOptions, ChangeStreamScope } from '../domain/information-schema';
import type { SpannerCatalog } from '../ports/spanner-catalog';

/** What validation learned: the scope to log and the options (retention) the scheduler keeps. */
export interface ValidatedStream {
  scope: ChangeStreamScope;
  options: ChangeStreamOptions;
  /** Configured table → watched columns (`all` or the list), as the replica sink needs them. */
  watched: Map<string, 'all' | string[]>;
}

function watchedColumns(scope: ChangeStreamScope, table: string): 'all' | string[] | undefined {
  const explicit = scope.tables.get(table);
  if (explicit) return explicit.columns;
  return scope.all ? 'all' : undefined;
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
  const options = await catalog.streamOptions(stream);
  const problems: string[] = [];
  const watched = new Map<string, 'all' | string[]>();
  for (const table of Object.keys(config.tables)) {
    const columns = watchedColumns(scope, table);
    if (columns === undefined)
      problems.push(
        `table ${table} is not watched by ${stream}: add it to the stream or remove it from SLUICE_TABLES`,
      );
    else watched.set(table, columns);
  }
  const wantsReplica = Object.values(config.tables).some((t) => t.replica !== undefined);
  if (wantsReplica && !capturesFullRow(options.valueCaptureType)) {
    problems.push(
      `value_capture_type ${options.valueCaptureType} does not carry full rows, which replica tables need: ALTER CHANGE STREAM ${stream} SET OPTIONS (value_capture_type = 'NEW_ROW') (or 'NEW_ROW_AND_OLD_VALUES'), or configure history tables only`,
    );
  }
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
  return { scope, options, watched };
}
