/**
 * The scheduler's tick (DESIGN §3–§4): make sure the pipeline is started, list the ledger (metadata only), plan,
 * promote waiting children whose parents all finished, enqueue ready work and takeovers of expired leases,
 * remove finished partitions whose children all started, guard the stream's retention, and write the status
 * object, the completeness table and one summary log line. Every write is compare-and-swap and every task is
 * named after its work, so two concurrent ticks decide and do the same harmless things.
 */
import type { Dialect } from '../../../domain/change-record';
import { SluiceError } from '../../../domain/errors';
import { type Manifest, planTick } from '../../../domain/ledger';
import { formatTimestamp, type Timestamp } from '../../../domain/timestamp';
import type { ChangeSource } from '../../../ports/change-source';
import type { CompletenessSink, HistorySink, ReplicaSink } from '../../../ports/sinks';
import type { SpannerCatalog } from '../../../ports/spanner-catalog';
import type { TaskQueue } from '../../../ports/task-queue';
import type { BackfillStarter } from '../../backfill';
import type { AppSettings, Runtime } from '../../common';
import type { EnrichmentCounters } from '../../enrichment';
import type { DeadLetterStore, LedgerStore, Versioned } from '../../ledger';
import { buildStatus, type PipelineStatus, type StatusError } from '../../ledger';
import type { PipelineLineage } from '../../lineage';
import { previousTables, syncTables, TableRegistry, type TableStatus, withMissingTables } from '../../tables';
import { StreamGuard } from '../common';
import { type StartArgs, startPipeline } from './pipeline-start';
import { guardRetention, type RetentionContext } from './retention-guard';
import { countDeadLetters, countEnrichment, partitionErrors, writeStoppedStatus } from './status-errors';
import { logValidated, type ValidatedStream, validateStream } from './stream-validation';
import { enqueue, promote, remove, type TickContext, toStatusError } from './tick-work';

/** The ports the scheduler uses. */
export interface SchedulerPorts {
  ledger: LedgerStore;
  catalog: SpannerCatalog;
  source: ChangeSource;
  queue: TaskQueue;
  completeness: CompletenessSink;
  replica: ReplicaSink;
  history: HistorySink;
  /** Starts backfills: `startAt: "snapshot"` and the retention fallback `restart-and-backfill` need it. */
  backfills?: BackfillStarter | undefined;
  /** The stream's dead letters, counted in the status (absent: not counted). */
  deadLetters?: DeadLetterStore | undefined;
  /** Run events of the pipeline (START, RUNNING heartbeats, FAIL, ABORT); none when absent. */
  lineage?: PipelineLineage | undefined;
  /** The reader instances' lookup counters, summed into the status. */
  enrichmentCounters?: EnrichmentCounters | undefined;
}

/** What one tick did, for the HTTP answer and tests. */
export interface TickReport {
  status: PipelineStatus | null;
  enqueued: number;
  promoted: number;
  removed: number;
}

/** One scheduler per function instance: it validates the stream once, then ticks. */
export class Scheduler {
  private validated: ValidatedStream | undefined;
  private dialect: Dialect = 'GOOGLE_STANDARD_SQL';
  /** The tables this instance plans and keeps ready in BigQuery (the tick finds new ones). */
  private readonly registry: TableRegistry;
  private readonly guard: StreamGuard;
  /** The status's table list of the last tick (a dropped table keeps its entry). */
  private tables: TableStatus[] | undefined;
  /** The manifest as the last tick left it (for lineage: what the tick changed). */
  private settled: Manifest | null = null;

  constructor(
    private readonly ports: SchedulerPorts,
    private readonly settings: AppSettings,
    private readonly runtime: Runtime,
  ) {
    this.registry = new TableRegistry(ports, settings.config, runtime.log);
    this.guard = new StreamGuard(ports.catalog, ports.ledger, settings.config, runtime);
  }

  /** Validates the stream once per instance and logs what was validated. */
  private async validate(): Promise<ValidatedStream> {
    if (this.validated) return this.validated;
    const v = await validateStream(this.ports.catalog, this.settings.config);
    this.dialect = v.dialect;
    logValidated(this.runtime.log, this.settings.config, v);
    this.validated = v;
    return v;
  }

  /**
   * Plans every watched table from one read of the catalog, creates the BigQuery tables of new ones and
   * adds the columns others gained; returns the status's table list.
   */
  private async syncTables(): Promise<TableStatus[]> {
    const { catalog, ledger } = this.ports;
    const { config } = this.settings;
    this.tables ??= previousTables(await ledger.readStatus().catch(() => undefined));
    const scope = await catalog.streamScope(config.spanner.stream);
    if (!scope) throw new SluiceError('permanent', `change stream ${config.spanner.stream} does not exist`);
    const args = {
      catalog,
      registry: this.registry,
      config,
      scope,
      previous: this.tables,
      log: this.runtime.log,
    };
    this.tables = await syncTables(args);
    return this.tables;
  }

  /** Runs one tick. @throws SluiceError; retryable ones should be answered 503 (the next tick retries anyway). */
  async tick(): Promise<TickReport> {
    let stream: ValidatedStream;
    try {
      stream = await this.validate();
    } catch (err) {
      const e = SluiceError.from(err, 'stream validation');
      if (e.kind !== 'permanent' && e.kind !== 'invalid-input') throw e;
      const status = await writeStoppedStatus(this.ports.ledger, this.settings.config, this.runtime, e);
      return { status, enqueued: 0, promoted: 0, removed: 0 };
    }
    const tables = await this.syncTables();
    const before = await this.ports.ledger.readManifest();
    let manifest = before;
    if (!manifest || manifest.value.state === 'starting') {
      await this.guard.refuseHiding();
      manifest = await startPipeline(this.startArgs(tables), manifest);
      if (!manifest) return { status: null, enqueued: 0, promoted: 0, removed: 0 };
    }
    manifest = await this.checkOptions(manifest);
    this.settled = manifest.value;
    const report = await this.runTick(manifest, stream, tables);
    await this.ports.lineage?.afterTick(
      before?.value ?? null,
      this.settled,
      tables,
      stream.scope,
      this.runtime.now(),
    );
    return report;
  }

  /** Resumes a pipeline stopped for its stream options once they are fixed, or stops one they now break. */
  private async checkOptions(manifest: Versioned<Manifest>): Promise<Versioned<Manifest>> {
    const current = await this.guard.resumeIfFixed(manifest);
    if (current.value.state !== 'running' || !(await this.guard.stopIfHiding(current))) return current;
    return (await this.ports.ledger.readManifest()) ?? current;
  }

  private startArgs(tables: TableStatus[] = this.tables ?? []): StartArgs {
    const { ledger, source, backfills } = this.ports;
    const { config } = this.settings;
    const watchedTables = tables.filter((t) => t.state === 'replicating').map((t) => t.source);
    return { ledger, source, config, runtime: this.runtime, dialect: this.dialect, backfills, watchedTables };
  }

  private tickContext(): TickContext {
    const { ledger, queue } = this.ports;
    return { ledger, queue, settings: this.settings, runtime: this.runtime };
  }

  private retentionContext(): RetentionContext {
    return { startArgs: this.startArgs(), settings: this.settings, runtime: this.runtime };
  }

  private async runTick(
    manifest: Versioned<Manifest>,
    stream: ValidatedStream,
    tables: TableStatus[],
  ): Promise<TickReport> {
    const { ledger } = this.ports;
    const now = this.runtime.now();
    const epoch = manifest.value.epoch;
    const listing = await ledger.listPartitions();
    const views = listing.partitions.map((p) => p.view);
    const plan = planTick(views, now, epoch);
    const errors: StatusError[] = listing.corrupt.map((c) => ({
      kind: 'permanent',
      message: c.message,
      at: formatTimestamp(now),
    }));
    const retention = await guardRetention(this.retentionContext(), manifest, plan.watermark, stream, now);
    if (retention.restarted || manifest.value.state === 'stopped' || retention.stopped) {
      const current = retention.manifest ?? manifest;
      this.settled = current.value;
      const status = buildStatus({
        manifest: current.value,
        views: [],
        plan: planTick([], now, current.value.epoch),
        now,
        retention: retention.info,
        errors,
        listCalls: listing.calls,
        tables,
      });
      await ledger.writeStatus(status);
      return { status, enqueued: 0, promoted: 0, removed: 0 };
    }
    const current = listing.partitions.filter((p) => p.view.epoch === epoch);
    const byId = new Map(current.map((p) => [p.view.id, p]));
    const promoted = await promote(this.tickContext(), plan, byId, errors);
    const enqueued = await enqueue(this.tickContext(), plan, promoted, byId, errors, epoch);
    const removed = await remove(this.tickContext(), plan, listing.partitions, epoch);
    errors.push(...(await partitionErrors(ledger, current, epoch)));
    const letters = await countDeadLetters(this.ports.deadLetters, (err) =>
      errors.push(toStatusError(this.runtime, err)),
    );
    const onError = (err: unknown) => errors.push(toStatusError(this.runtime, err));
    const enrichment = await countEnrichment(this.ports.enrichmentCounters, this.settings.config, onError);
    const shown = withMissingTables(tables, errors);
    const status = buildStatus({
      manifest: manifest.value,
      views: current.map((p) => p.view),
      plan,
      now,
      retention: retention.info,
      errors,
      listCalls: listing.calls + (letters?.calls ?? 0) + (enrichment?.calls ?? 0),
      tables: shown,
      deadLetters: letters?.counts,
      enrichment: enrichment && { lookups: enrichment.lookups, instances: enrichment.instances },
      lineage: this.ports.lineage?.stats(),
    });
    await ledger.writeStatus(status);
    await this.recordCompleteness(plan.watermark, shown);
    this.runtime.log.info('scheduler.tick', {
      lagSeconds: status.lagSeconds,
      watermark: status.watermark,
      partitions: status.partitions,
      enqueued,
      promoted: promoted.length,
      expired: plan.expired.length,
      removed,
      failed: plan.failed.length,
      listCalls: listing.calls,
    });
    return { status, enqueued, promoted: promoted.length, removed };
  }

  private async recordCompleteness(watermark: Timestamp | null, tables: TableStatus[]): Promise<void> {
    if (watermark === null) return;
    const entries = tables
      .filter((t) => t.state === 'replicating')
      .flatMap((t) =>
        [t.replica, t.history]
          .filter((d): d is string => d !== null)
          .map((destination) => ({ sourceTable: t.source, destination, watermark })),
      );
    await this.ports.completeness.record(entries);
  }
}
