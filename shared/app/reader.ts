/**
 * The reader: one window of one partition per task (DESIGN §3–§4, ADR-201's step-by-step). Take the lease (a
 * duplicate or stale task is a no-op), plan the window, read and write the sinks, advance the ledger only after
 * they acknowledged, then release and chain the next window — or, at a child-partitions record, finish the
 * partition and enqueue its ready children. The outcome says which HTTP status Cloud Tasks should get.
 */
import { httpStatusFor, SluiceError } from '../domain/errors';
import {
  acquireLease,
  advancePosition,
  failPartition,
  type PartitionEntry,
  planWindow,
  releaseLease,
  type Transition,
  type Window,
  windowId,
} from '../domain/ledger';
import type { Logger } from '../domain/log';
import { addMillis, formatTimestamp } from '../domain/timestamp';
import type { ChangeSource } from '../ports/change-source';
import type { HistorySink, ReplicaSink } from '../ports/sinks';
import type { SpannerCatalog } from '../ports/spanner-catalog';
import type { TaskQueue } from '../ports/task-queue';
import { type LedgerStore, newWriterToken } from './ledger-store';
import { endPartition } from './partition-end';
import { enqueueReaderTask, type ReaderTask } from './reader-task';
import { type AppSettings, epochMillis, type Runtime } from './settings';
import { runWindow, type WindowResult } from './window-run';

/** The ports a reader uses. */
export interface ReaderPorts {
  ledger: LedgerStore;
  source: ChangeSource;
  queue: TaskQueue;
  catalog: SpannerCatalog;
  replica: ReplicaSink;
  history: HistorySink;
}

/** What a task came to, and the HTTP status to answer Cloud Tasks with. */
export interface TaskOutcome {
  status: number;
  outcome: 'window' | 'finished' | 'noop' | 'failed' | 'retry';
  detail: string;
}

const noop = (detail: string): TaskOutcome => ({ status: 200, outcome: 'noop', detail });

/** Runs reader tasks; one per function instance, shared by concurrent requests. */
export class Reader {
  constructor(
    private readonly ports: ReaderPorts,
    private readonly settings: AppSettings,
    private readonly runtime: Runtime,
  ) {}

  /** Runs one task; never throws (every failure becomes an outcome). */
  async run(task: ReaderTask, log: Logger = this.runtime.log): Promise<TaskOutcome> {
    const holder = newWriterToken('reader');
    let leased: PartitionEntry | undefined;
    try {
      const manifest = await this.ports.ledger.readManifest();
      if (!manifest || manifest.value.epoch !== task.epoch || manifest.value.state !== 'running') {
        return noop(`pipeline epoch ${task.epoch} is not running`);
      }
      const acquired = await this.acquire(task, holder);
      if (typeof acquired === 'string') {
        log.info('task.noop', { reason: acquired });
        return noop(acquired);
      }
      leased = acquired;
      return await this.runLeased(leased, holder, log);
    } catch (err) {
      return this.fail(err, task, holder, leased, log);
    }
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

  private async runLeased(entry: PartitionEntry, holder: string, log: Logger): Promise<TaskOutcome> {
    const { ledger, source, queue, catalog, replica, history } = this.ports;
    const config = this.settings.config;
    const now = this.runtime.now();
    const window = planWindow(entry, now, {
      mode: config.mode,
      maxWindowMs: config.window.maxMs,
      longPollMs: config.window.longPollMs,
    });
    if (!window) {
      const released = await this.release(entry, holder, null);
      await this.chain(released, true);
      return { status: 200, outcome: 'window', detail: 'nothing to read yet' };
    }
    const wlog = log.child({ window: windowId(window) });
    const ctx = {
      ledger,
      source,
      sinks: { replica, history, catalog },
      config,
      runtime: this.runtime,
      holder,
    };
    const result = await runWindow(ctx, entry, window);
    const end = result.progress.end;
    wlog.info('reader.window', {
      records: result.progress.records,
      rows: result.rows,
      from: formatTimestamp(window.from),
      to: formatTimestamp(window.to),
      ended: end !== null,
    });
    if (end) {
      const args = {
        ledger,
        queue,
        readerUrl: this.settings.readerUrl,
        pipeline: config.pipeline,
        holder,
        records: result.uncounted,
      };
      const children = await endPartition(args, result.entry, end);
      wlog.info('partition.finished', {
        end: formatTimestamp(end.at),
        children: end.children.length,
        enqueued: children.length,
      });
      return { status: 200, outcome: 'finished', detail: `finished; ${children.length} children enqueued` };
    }
    const released = await this.release(result.entry, holder, result);
    await this.chain(released, this.caughtUp(window));
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

  /** Enqueues the next window: at once in continuous mode or when behind, after the idle delay otherwise. */
  private async chain(entry: PartitionEntry, idle: boolean): Promise<void> {
    const config = this.settings.config;
    const wait = config.mode === 'scheduled' && idle;
    const notBeforeMs = wait ? epochMillis(this.runtime.now()) + this.settings.idleDelayMs : undefined;
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
      entry.writer,
      notBeforeMs === undefined ? {} : { notBeforeMs },
    );
  }

  /** Maps a failure to an outcome: retryable → 503/429 (lease released), permanent → recorded, 200. */
  private async fail(
    err: unknown,
    task: ReaderTask,
    holder: string,
    leased: PartitionEntry | undefined,
    log: Logger,
  ): Promise<TaskOutcome> {
    const e = SluiceError.from(err, `partition ${task.partition}`);
    const at = this.runtime.now();
    const error = { kind: e.kind, message: e.message, at };
    if (e.kind === 'conflict') {
      log.warn('task.conflict', { reason: e.message });
      return noop(e.message);
    }
    log.error('task.failed', e, { retryable: e.kind === 'retryable' });
    if (!leased) {
      // Nothing is held (the ledger itself failed, or the body names nothing we can record on).
      return {
        status: httpStatusFor(e.kind, { rateLimited: e.rateLimited }),
        outcome: e.kind === 'retryable' ? 'retry' : 'failed',
        detail: e.message,
      };
    }
    const permanent = e.kind !== 'retryable';
    await this.ports.ledger
      .updatePartition(task.epoch, task.partition, (entry, writer) =>
        permanent
          ? failPartition(entry, { holder, error, writer })
          : releaseLease(entry, { holder, writer, error }),
      )
      .catch((recordErr: unknown) => log.error('task.record-failed', recordErr));
    return permanent
      ? { status: 200, outcome: 'failed', detail: e.message }
      : {
          status: httpStatusFor('retryable', { rateLimited: e.rateLimited }),
          outcome: 'retry',
          detail: e.message,
        };
  }
}
