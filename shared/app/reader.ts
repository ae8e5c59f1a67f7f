/**
 * The reader: one window of one partition per task (DESIGN §3–§4, ADR-201's step-by-step). Take the lease (a
 * duplicate or stale task is a no-op), plan the window, read and write the sinks, advance the ledger only after
 * they acknowledged, then release and chain the next window — or, at a child-partitions record, finish the
 * partition and enqueue its ready children. The outcome says which HTTP status Cloud Tasks should get.
 */
import { SluiceError } from '../domain/errors';
import {
  acquireLease,
  advancePosition,
  type Boundary,
  checkpointQuiet,
  type PartitionEntry,
  planWindow,
  releaseLease,
  type Transition,
  type Window,
  windowId,
} from '../domain/ledger';
import type { Logger } from '../domain/log';
import { addMillis, diffMillis, formatTimestamp, type Timestamp } from '../domain/timestamp';
import type { ChangeSource } from '../ports/change-source';
import type { HistorySink, ReplicaSink } from '../ports/sinks';
import type { SpannerCatalog } from '../ports/spanner-catalog';
import type { TaskQueue } from '../ports/task-queue';
import type { DeadLetterStore } from './dead-letters';
import { type LedgerStore, newWriterToken, type Versioned } from './ledger-store';
import { endPartition } from './partition-end';
import { startQuietWindow } from './quiet-window';
import { noop, recordTaskFailure, type TaskOutcome } from './reader-failure';
import { enqueueReaderTask, type ReaderTask } from './reader-task';
import { type AppSettings, epochMillis, type Runtime } from './settings';
import { StreamGuard } from './stream-guard';
import { TableRegistry } from './table-registry';
import { runWindow, WindowFailure, type WindowResult } from './window-run';

/** The ports a reader uses. */
export interface ReaderPorts {
  ledger: LedgerStore;
  source: ChangeSource;
  queue: TaskQueue;
  catalog: SpannerCatalog;
  replica: ReplicaSink;
  history: HistorySink;
  /** Where records the replica cannot take go under `SLUICE_ON_BAD_RECORD=dead-letter`. */
  deadLetters: DeadLetterStore;
}

export type { TaskOutcome };

/** Task key of the window after a quiet one that wrote nothing: unique per window, as the writer is unchanged. */
function quietTaskKey(entry: PartitionEntry, at: Timestamp): string {
  return `${entry.writer}#${at.toString()}`;
}

/** Runs reader tasks; one per function instance, shared by concurrent requests. */
export class Reader {
  /** The tables this instance replicates and their plans (shared by every window of the instance). */
  readonly tables: TableRegistry;
  private readonly guard: StreamGuard;

  constructor(
    private readonly ports: ReaderPorts,
    private readonly settings: AppSettings,
    private readonly runtime: Runtime,
  ) {
    this.tables = new TableRegistry(ports, settings.config, runtime.log);
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
        const started = await this.startLeaseFree(task, holder, log);
        if ('status' in started) return started;
        if (started.kind === 'active') {
          leased = started.entry;
          return await this.runLeased(leased, holder, log, deadline, started);
        }
        // Not `ready` (a lease to take over or refuse, a finished or failed partition): the leased path decides.
      }
      const acquired = await this.acquire(task, holder);
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
      if (!leased && leaseFree) leased = await this.leaseToRecord(err, task, holder);
      return recordTaskFailure(
        { ledger: this.ports.ledger, now: this.runtime.now() },
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
    const acquired = await this.acquire(task, holder).catch(() => undefined);
    return typeof acquired === 'object' ? acquired : undefined;
  }

  /** Takes the lease; a string says why the task is a no-op. */
  private async acquire(task: ReaderTask, holder: string): Promise<PartitionEntry | string> {
    const { config } = this.settings;
    const out = await this.ports.ledger.updatePartition(task.epoch, task.partition, (e, writer) =>
      task.position < e.position
        ? null
        : acquireLease(e, { holder, now: this.runtime.now(), durationMs: config.leaseMs, writer }),
    );
    switch (out.kind) {
      case 'missing':
        return `unknown partition ${task.partition} in epoch ${task.epoch}`;
      case 'unchanged':
        return `stale task: position is already ${formatTimestamp(out.entry.position)}`;
      case 'refused':
        return out.message;
      case 'written':
        return out.entry;
    }
  }

  /**
   * Scheduled mode: starts the window without a lease (ADR-1201). Answers an outcome when the task is done
   * (quiet, stale, lost race), `active` when records arrived and the lease is held, `leased-path` otherwise.
   */
  private async startLeaseFree(
    task: ReaderTask,
    holder: string,
    log: Logger,
  ): Promise<
    | TaskOutcome
    | { kind: 'active'; entry: PartitionEntry; window: Window; source: ChangeSource }
    | { kind: 'leased-path' }
  > {
    const current = await this.ports.ledger.readPartition(task.epoch, task.partition);
    if (!current) return noop(`unknown partition ${task.partition} in epoch ${task.epoch}`);
    const entry = current.value;
    if (task.position < entry.position) {
      return noop(`stale task: position is already ${formatTimestamp(entry.position)}`);
    }
    if (entry.state !== 'ready') return { kind: 'leased-path' };
    const window = this.plan(entry);
    if (!window) {
      await this.chain(entry, this.settings.idleDelayMs, quietTaskKey(entry, this.runtime.now()));
      return { status: 200, outcome: 'window', detail: 'nothing to read yet' };
    }
    const { config } = this.settings;
    const ctx = {
      ledger: this.ports.ledger,
      source: this.ports.source,
      runtime: this.runtime,
      holder,
      leaseMs: config.leaseMs,
      heartbeatMs: config.heartbeatMs,
    };
    const out = await startQuietWindow(ctx, current, window);
    if (out.kind === 'lost') {
      log.info('task.noop', { reason: out.reason });
      return noop(out.reason);
    }
    if (out.kind === 'active') return { ...out, window };
    return this.finishQuiet(current, window, out.boundary, log);
  }

  /**
   * A window that saw only heartbeats: write the position only when it is older than the quiet-checkpoint
   * interval (one compare-and-swap write, no lease), then chain the next window after a delay that grows with
   * how long the partition has been quiet (about doubling), capped.
   */
  private async finishQuiet(
    current: Versioned<PartitionEntry>,
    window: Window,
    boundary: Boundary | null,
    log: Logger,
  ): Promise<TaskOutcome> {
    const entry = current.value;
    const quietMs = diffMillis(window.to, entry.position);
    const idle = this.caughtUp(window);
    // A window cut short by window.maxMs must move the position, or the next one would read it again.
    const due = !idle || quietMs >= (this.settings.quietCheckpointMs ?? 0);
    let next = entry;
    if (boundary && boundary.at > entry.position && due) {
      const t = checkpointQuiet(entry, { boundary, writer: newWriterToken('reader') });
      if (!t.ok) return noop(t.message);
      const generation = await this.ports.ledger.writePartition(t.entry, current.generation);
      // Someone else wrote the entry since it was read: they progressed and chain the partition themselves.
      if (!generation) return noop(`partition ${entry.id} changed while its quiet window was read`);
      next = t.entry;
    }
    const { idleDelayMs } = this.settings;
    const cap = Math.max(idleDelayMs, this.settings.idleMaxDelayMs ?? idleDelayMs);
    const delayMs = idle ? Math.min(cap, Math.max(idleDelayMs, quietMs)) : null;
    const key = next === entry ? quietTaskKey(entry, this.runtime.now()) : next.writer;
    await this.chain(next, delayMs, key);
    log.info('reader.quiet', {
      from: formatTimestamp(window.from),
      to: formatTimestamp(window.to),
      checkpointed: next !== entry,
      nextInMs: delayMs ?? 0,
    });
    const what = next === entry ? 'nothing written' : `checkpointed to ${formatTimestamp(next.position)}`;
    return { status: 200, outcome: 'window', detail: `quiet; ${what}` };
  }

  private plan(entry: PartitionEntry): Window | null {
    const config = this.settings.config;
    return planWindow(entry, this.runtime.now(), {
      mode: config.mode,
      maxWindowMs: config.window.maxMs,
      longPollMs: config.window.longPollMs,
    });
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
    const window = started ? started.window : this.plan(entry);
    if (!window) {
      const released = await this.release(entry, holder, null);
      await this.chain(released, this.idleDelay(true));
      return { status: 200, outcome: 'window', detail: 'nothing to read yet' };
    }
    const wlog = log.child({ window: windowId(window) });
    const ctx = {
      ledger,
      source,
      sinks: { replica, history, catalog, tables: this.tables },
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
    const released = await this.release(result.entry, holder, result);
    await this.chain(released, this.idleDelay(this.caughtUp(window)));
    return { status: 200, outcome: 'window', detail: `read to ${formatTimestamp(released.position)}` };
  }

  /** True when the window reached about now (scheduled mode then waits before the next window). */
  private caughtUp(window: Window): boolean {
    return window.to >= addMillis(this.runtime.now(), -this.settings.idleDelayMs);
  }

  /** Advances to the acknowledged boundary and releases the lease, in one write. */
  private async release(
    entry: PartitionEntry,
    holder: string,
    result: WindowResult | null,
  ): Promise<PartitionEntry> {
    const out = await this.ports.ledger.updatePartition(entry.epoch, entry.id, (e, writer): Transition => {
      let next = e;
      if (result?.acked) {
        const moved = advancePosition(e, {
          holder,
          boundary: result.acked,
          writer,
          records: result.uncounted,
          history: result.history,
        });
        if (!moved.ok) return moved;
        next = moved.entry;
      }
      return releaseLease(next, { holder, writer, windowDone: true });
    });
    if (out.kind === 'missing' || out.kind === 'refused') {
      throw new SluiceError(
        'conflict',
        `could not release ${entry.id}: ${out.kind === 'refused' ? out.message : 'gone'}`,
      );
    }
    return out.entry;
  }

  /** Scheduled mode waits the idle delay once caught up; continuous mode and a partition behind never wait. */
  private idleDelay(idle: boolean): number | null {
    return this.settings.config.mode === 'scheduled' && idle ? this.settings.idleDelayMs : null;
  }

  /**
   * Enqueues the next window, after `delayMs` (null: at once). The task is named after the entry's last write
   * (`key`, by default its writer token), so the scheduler's tick and this chain name the same task; a quiet
   * window that wrote nothing passes a key of its own, or its task would carry the name of the one just run.
   */
  private async chain(entry: PartitionEntry, delayMs: number | null, key = entry.writer): Promise<void> {
    const config = this.settings.config;
    const notBeforeMs = delayMs === null ? undefined : epochMillis(this.runtime.now()) + delayMs;
    const task = {
      pipeline: config.pipeline,
      epoch: entry.epoch,
      partition: entry.id,
      position: entry.position,
    };
    await enqueueReaderTask(
      this.ports.queue,
      this.settings.readerUrl,
      task,
      key,
      notBeforeMs === undefined ? {} : { notBeforeMs },
    );
  }
}
