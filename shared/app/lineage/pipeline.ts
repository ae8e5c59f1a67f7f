/**
 * Lineage of the replication pipeline, driven by the scheduler: after each tick it emits the run events the
 * tick owes (START when the ledger started, ABORT + START on a restart at a new epoch, FAIL when the pipeline
 * stopped, a RUNNING heartbeat every `heartbeatMs`) and retries events an earlier tick could not send. The
 * first tick of an instance counts as a heartbeat due, so a lost START is made good within one tick.
 */
import type { PipelineConfig } from '../../domain/config';
import { SluiceError } from '../../domain/errors';
import type { ChangeStreamScope } from '../../domain/information-schema';
import type { Manifest } from '../../domain/ledger';
import { type LineageScope, type LineageTable, pipelineRunId, runEvent } from '../../domain/lineage/events';
import { pipelineTransitions } from '../../domain/lineage/transitions';
import type { Logger } from '../../domain/log';
import { diffMillis, type Timestamp } from '../../domain/timestamp';
import type { SpannerCatalog } from '../../ports/spanner-catalog';
import type { LineageReporter, LineageStats } from './reporter';

/** The scope of a pipeline's lineage, from its configuration. */
export function lineageScope(
  config: Pick<PipelineConfig, 'pipeline' | 'project' | 'spanner' | 'bigquery'>,
): LineageScope {
  return {
    pipeline: config.pipeline,
    project: config.project,
    instance: config.spanner.instance,
    database: config.spanner.database,
    dataset: config.bigquery.dataset,
  };
}

/** A replicated table as the tick planned it (the status's table list). */
export interface ReplicatedTable {
  source: string;
  replica: string | null;
  history: string | null;
  state: string;
}

/** What the pipeline's lineage needs. */
export interface PipelineLineageDeps {
  reporter: LineageReporter;
  config: Pick<PipelineConfig, 'pipeline' | 'project' | 'spanner' | 'bigquery'> &
    Partial<Pick<PipelineConfig, 'tables'>>;
  catalog: Pick<SpannerCatalog, 'tableSchema'>;
  heartbeatMs: number;
  log: Logger;
}

/** One per scheduler instance. */
export class PipelineLineage {
  private lastBeat: Timestamp | undefined;

  constructor(private readonly deps: PipelineLineageDeps) {}

  /** The reporter's counters (for the status). */
  stats(): LineageStats {
    return this.deps.reporter.stats();
  }

  /**
   * Emits what the tick from `before` to `after` owes, over the tables the tick replicates (`tables`, with
   * the watched columns from the stream's `scope`). Never throws: a schema that cannot be read now is
   * logged and the heartbeat stays due, so the next tick sends the graph.
   */
  async afterTick(
    before: Manifest | null,
    after: Manifest | null,
    tables: readonly ReplicatedTable[],
    scope: ChangeStreamScope,
    now: Timestamp,
  ): Promise<void> {
    const { reporter, heartbeatMs } = this.deps;
    const due = this.lastBeat === undefined || diffMillis(now, this.lastBeat) >= heartbeatMs;
    const transitions = pipelineTransitions(before, after, due);
    if (transitions.length === 0) return reporter.flush();
    let lineage: LineageTable[];
    try {
      lineage = await this.lineageTables(tables, scope);
    } catch (err) {
      this.deps.log.warn('lineage.schema-unavailable', { error: SluiceError.from(err).message });
      return reporter.flush();
    }
    const where = lineageScope(this.deps.config);
    for (const t of transitions) {
      const runId = pipelineRunId(where, t.run.epoch, t.run.start);
      const run = { eventType: t.eventType, at: now, runId, error: t.error };
      await reporter.emit(runEvent(where, 'pipeline', run, lineage));
    }
    this.lastBeat = now;
  }

  /** The replicating tables with their current schemas. */
  private async lineageTables(
    tables: readonly ReplicatedTable[],
    scope: ChangeStreamScope,
  ): Promise<LineageTable[]> {
    const out: LineageTable[] = [];
    for (const t of tables.filter((x) => x.state === 'replicating')) {
      // Read at each emission (every heartbeat at most): columns added since appear in the next event.
      const schema = await this.deps.catalog.tableSchema(t.source);
      const watched = scope.tables.get(t.source)?.columns ?? 'all';
      const lookups = this.deps.config.tables?.[t.source]?.lookups;
      out.push({
        schema,
        watched,
        replica: t.replica ?? undefined,
        history: t.history ?? undefined,
        lookups,
      });
    }
    return out;
  }
}
