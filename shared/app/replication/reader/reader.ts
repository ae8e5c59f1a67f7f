/**
 * The reader: one window of one partition per task (DESIGN §3–§4, ADR-201's step-by-step). Take the lease (a
 * duplicate or stale task is a no-op), plan the window, read and write the sinks, advance the ledger only after
 * they acknowledged, then release and chain the next window — or, at a child-partitions record, finish the
 * partition and enqueue its ready children. The outcome says which HTTP status Cloud Tasks should get.
 */
import { SluiceError } from '../../../domain/errors';
import { type PartitionEntry, type Window, windowId } from '../../../domain/ledger';
import type { Logger } from '../../../domain/log';
import { addMillis, formatTimestamp, type Timestamp } from '../../../domain/timestamp';
import type { ChangeSource } from '../../../ports/change-source';
import type { AppSettings, Runtime } from '../../common';
import { Enrichments } from '../../enrichment';
import { newWriterToken } from '../../ledger';
import { TableRegistry } from '../../tables';
import type { ReaderTask } from '../common';
import { StreamGuard } from '../common';
import { endPartition } from './partition-end';
import { noop, recordTaskFailure, type TaskOutcome } from './reader-failure';
import { startLeaseFree } from './reader-quiet';
import {
  acquire,
  caughtUp,
  chain,
  idleDelay,
  plan,
  type ReaderPorts,
  type ReaderScope,
  release,
} from './reader-steps';
import { runWindow, WindowFailure, type WindowResult } from './window-run';

export type { ReaderPorts, TaskOutcome };

/** Runs reader tasks; one per function instance, shared by concurrent requests. */
export class Reader {
  /** The tables this instance replicates and their plans (shared by every window of the instance). */
  readonly tables: TableRegistry;
  /** The lookups' enrichers of this instance (their caches and counters). */
  readonly enrichments: Enrichments;
  private readonly guard: StreamGuard;
  /** The ports, settings and clock, as the reader's steps take them. */
  private readonly scope: ReaderScope;

  constructor(
    private readonly ports: ReaderPorts,
    private readonly settings: AppSettings,
    private readonly runtime: Runtime,
  ) {
    this.scope = { ports, settings, runtime };
    this.tables = new TableRegistry(ports, settings.config, runtime.log);
    this.enrichments = Enrichments.over(ports);
    this.guard = new StreamGuard(ports.catalog, ports.ledger, settings.config, runtime);
  }

  /** Runs one task; never throws (every failure becomes an outcome). */
  async run(task: ReaderTask, log: Logger = this.runtime.log): Promise<TaskOutcome> {
    const holder = newWriterToken('reader');
    const deadline = this.deadline(this.runtime.now());
    let leased: PartitionEntry | undefined;
    let leaseFree = false;
    try {
      const manifest = await this.ports.ledger.readManifest();
      if (!manifest || manifest.value.epoch !== task.epoch || manifest.value.state !== 'running') {
        return noop(`pipeline epoch ${task.epoch} is not running`);
      }
      // Every window checks the stream's options: one that starts hiding changes stops the pipeline.
      const stopped = await this.guard.stopIfHiding(manifest);
      if (stopped) {
        log.warn('task.noop', { reason: stopped });
        return noop(`pipeline stopped: ${stopped}`);
      }
      if (this.settings.config.mode === 'scheduled') {
        leaseFree = true;
        const started = await startLeaseFree(this.scope, task, holder, log);
        if ('status' in started) return started;
        if (started.kind === 'active') {
          leased = started.entry;
          return await this.runLeased(leased, holder, log, deadline, started);
        }
        // Not `ready` (a lease to take over or refuse, a finished or failed partition): the leased path decides.
      }
      const acquired = await acquire(this.scope, task, holder);
      if (typeof acquired === 'string') {
        log.info('task.noop', { reason: acquired });
        return noop(acquired);
      }
      leased = acquired;
      return await this.runLeased(leased, holder, log, deadline);
    } catch (thrown) {
      // A window that failed says what it had acknowledged: recorded with the failure (ADR-1501).
      const partial = thrown instanceof WindowFailure ? thrown.partial : undefined;
      const err = thrown instanceof WindowFailure ? thrown.cause : thrown;
      // A table met missing is planned and ensured again by the next window, with the ledger read afresh.
      this.tables.forgetMissing(err);
      if (!leased && leaseFree) leased = await this.leaseToRecord(err, task, holder);
      return recordTaskFailure(
        { ledger: this.ports.ledger, now: this.runtime.now(), logValues: this.settings.config.logValues },
        { err, task, holder, leased, ...(partial ? { partial } : {}) },
        log,
      );
    }
  }

  /**
   * A permanent failure met before the lease was taken (in a lease-free window start) must still stop the
   * partition: take the lease so the failure can be recorded. Undefined when it cannot be taken.
   */
  private async leaseToRecord(
    err: unknown,
    task: ReaderTask,
    holder: string,
  ): Promise<PartitionEntry | undefined> {
    const kind = SluiceError.from(err, `partition ${task.partition}`).kind;
    if (this.settings.config.mode !== 'scheduled' || kind === 'retryable' || kind === 'conflict')
      return undefined;
    const acquired = await acquire(this.scope, task, holder).catch(() => undefined);
    return typeof acquired === 'object' ? acquired : undefined;
  }

  private async runLeased(
    entry: PartitionEntry,
    holder: string,
    log: Logger,
    deadline: Timestamp | undefined,
    started?: { window: Window; source: ChangeSource },
  ): Promise<TaskOutcome> {
    const { ledger, catalog, replica, history } = this.ports;
    const config = this.settings.config;
    const source = started?.source ?? this.ports.source;
    const window = started ? started.window : plan(this.scope, entry);
    if (!window) {
      const released = await release(this.scope, entry, holder, null);
      await chain(this.scope, released, idleDelay(this.scope, true));
      return { status: 200, outcome: 'window', detail: 'nothing to read yet' };
    }
    const wlog = log.child({ window: windowId(window) });
    const ctx = {
      ledger,
      source,
      sinks: { replica, history, catalog, tables: this.tables, enrichments: this.enrichments },
      deadLetters: this.ports.deadLetters,
      config,
      runtime: this.runtime,
      holder,
      deadline,
    };
    const result = await runWindow(ctx, entry, window);
    try {
      return await this.afterWindow(result, window, holder, wlog);
    } catch (err) {
      throw new WindowFailure(err, result);
    } finally {
      result.streams.release();
    }
  }

  /**
   * This request's deadline: the dispatch deadline less a margin, from when the task started (ADR-1505). Cloud
   * Tasks gives up on the request at the dispatch deadline and may hand the partition to another reader; a
   * window stops before that, at the last boundary it flushed.
   */
  private deadline(started: Timestamp): Timestamp | undefined {
    const ms = this.settings.requestDeadlineMs;
    return ms === undefined ? undefined : addMillis(started, ms);
  }

  /** Records the window's outcome: the partition finished (children enqueued), or released and chained. */
  private async afterWindow(
    result: WindowResult,
    window: Window,
    holder: string,
    wlog: Logger,
  ): Promise<TaskOutcome> {
    const { ledger, queue } = this.ports;
    const config = this.settings.config;
    const end = result.progress.end;
    wlog.info('reader.window', {
      records: result.progress.records,
      rows: result.rows,
      from: formatTimestamp(window.from),
      to: formatTimestamp(window.to),
      ended: end !== null,
      ...(result.deadLettered > 0 ? { deadLettered: result.deadLettered } : {}),
      ...(result.cutShort ? { cutShort: 'request deadline' } : {}),
    });
    if (end) {
      const args = {
        ledger,
        queue,
        readerUrl: this.settings.readerUrl,
        pipeline: config.pipeline,
        holder,
        records: result.uncounted,
        history: result.history,
        now: this.runtime.now(),
      };
      const children = await endPartition(args, result.entry, end);
      await result.streams.finalizeAll();
      wlog.info('partition.finished', {
        end: formatTimestamp(end.at),
        children: end.children.length,
        enqueued: children.length,
      });
      return { status: 200, outcome: 'finished', detail: `finished; ${children.length} children enqueued` };
    }
    const released = await release(this.scope, result.entry, holder, result);
    await chain(this.scope, released, idleDelay(this.scope, caughtUp(this.scope, window)));
    return { status: 200, outcome: 'window', detail: `read to ${formatTimestamp(released.position)}` };
  }
}
