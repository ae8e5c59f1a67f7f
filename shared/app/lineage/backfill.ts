/**
 * Lineage of backfills: a START when a job starts running, COMPLETE when every partition is done, FAIL when
 * a partition fails permanently, ABORT when an operator cancels it — one run per job, its id derived from
 * the job id and snapshot timestamp so every worker instance names the same run.
 */
import type { BackfillJob } from '../../domain/backfill/job';
import type { PipelineConfig } from '../../domain/config';
import { backfillRunId, type LineageTable, runEvent } from '../../domain/lineage/events';
import type { RunEventType } from '../../domain/lineage/open-lineage';
import type { Timestamp } from '../../domain/timestamp';
import { lineageScope } from './pipeline';
import type { LineageReporter } from './reporter';

/** Emits a backfill job's run events. */
export class BackfillLineage {
  constructor(
    private readonly reporter: LineageReporter,
    private readonly config: Pick<PipelineConfig, 'pipeline' | 'project' | 'spanner' | 'bigquery'> &
      Partial<Pick<PipelineConfig, 'tables'>>,
  ) {}

  /** The event of `eventType` for `job` at `at`. Never throws. */
  async report(job: BackfillJob, eventType: RunEventType, at: Timestamp, error?: string): Promise<void> {
    const scope = lineageScope(this.config);
    const runId = backfillRunId(scope, job.id, job.snapshot.readTimestamp);
    const tables: LineageTable[] = job.tables.map((t) => ({
      schema: t.schema,
      watched: t.columns,
      replica: t.replica,
      history: t.history,
      lookups: this.config.tables?.[t.name]?.lookups,
    }));
    await this.reporter.emit(runEvent(scope, 'backfill', { eventType, at, runId, error }, tables));
  }
}
