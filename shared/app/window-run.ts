/**
 * Reading one window of one partition under a lease: stream the records, fold them with `observe`, flush every
 * closed timestamp to the sinks about every `flush.intervalMs`, and checkpoint the acknowledged boundary into
 * the ledger (renewing the lease) about every `flush.checkpointMs`. Only whole timestamps are flushed, so the
 * position always sits on a boundary and a reader killed at any point resumes exactly after it.
 */

import type { DataChangeRecord } from '../domain/change-record';
import type { PipelineConfig } from '../domain/config';
import { SluiceError } from '../domain/errors';
import {
  advancePosition,
  type Boundary,
  boundaryOf,
  completeWindow,
  observe,
  type PartitionEntry,
  renewLease,
  startWindow,
  type Window,
  type WindowProgress,
  windowId,
} from '../domain/ledger';
import { diffMillis, type Timestamp } from '../domain/timestamp';
import type { ChangeSource } from '../ports/change-source';
import type { LedgerStore } from './ledger-store';
import type { Runtime } from './settings';
import { type SinkPorts, writeBatch } from './sink-writer';

/** Flush early when this many records are buffered, whatever the interval. */
const MAX_BUFFERED_RECORDS = 5_000;

/** Where a window ended: its progress, the last entry written, and the boundary the sinks acknowledged. */
export interface WindowResult {
  progress: WindowProgress;
  entry: PartitionEntry;
  acked: Boundary | null;
  /** Records acknowledged but not yet counted in the ledger. */
  uncounted: number;
  rows: number;
}

/** State of a window in progress. */
class WindowRun {
  progress: WindowProgress;
  pending: DataChangeRecord[] = [];
  acked: Boundary | null = null;
  uncounted = 0;
  rows = 0;
  flushes = 0;
  lastFlush: Timestamp;
  lastCheckpoint: Timestamp;

  constructor(
    readonly ctx: WindowContext,
    public entry: PartitionEntry,
    readonly window: Window,
  ) {
    this.progress = startWindow(window);
    this.lastFlush = ctx.runtime.now();
    this.lastCheckpoint = this.lastFlush;
  }

  /** Writes every buffered record of a closed timestamp, then remembers the boundary as acknowledged. */
  async flush(): Promise<void> {
    const boundary = boundaryOf(this.progress);
    this.lastFlush = this.ctx.runtime.now();
    if (boundary === null) return;
    const closed = this.pending.filter((r) => r.commitTimestamp <= boundary.at);
    if (closed.length > 0) {
      this.pending = this.pending.slice(closed.length);
      const key = `${windowId(this.window)}/${this.flushes++}`;
      const out = await writeBatch(this.ctx.sinks, this.ctx.config, closed, key, this.ctx.runtime.log);
      this.rows += out.replicaRows + out.historyRows;
      this.uncounted += closed.length;
    }
    this.acked = boundary;
  }

  /** Records the acknowledged boundary in the ledger and renews the lease (one compare-and-swap write). */
  async checkpoint(): Promise<void> {
    this.lastCheckpoint = this.ctx.runtime.now();
    const { holder, config, ledger } = this.ctx;
    const acked = this.acked;
    const records = this.uncounted;
    const out = await ledger.updatePartition(this.entry.epoch, this.entry.id, (e, writer) => {
      const moved = acked
        ? advancePosition(e, { holder, boundary: acked, writer, records })
        : { ok: true as const, entry: e };
      if (!moved.ok) return moved;
      return renewLease(moved.entry, {
        holder,
        now: this.ctx.runtime.now(),
        durationMs: config.leaseMs,
        writer,
      });
    });
    if (out.kind === 'missing' || out.kind === 'refused') {
      throw new SluiceError(
        'conflict',
        `lost the lease of ${this.entry.id}: ${out.kind === 'refused' ? out.message : 'entry gone'}`,
      );
    }
    this.entry = out.entry;
    this.uncounted = 0;
  }
}

/** What a window needs. */
export interface WindowContext {
  ledger: LedgerStore;
  source: ChangeSource;
  sinks: SinkPorts;
  config: PipelineConfig;
  runtime: Runtime;
  holder: string;
}

/** Reads a window to its end (or the partition's end) and flushes everything; does not release the lease. */
export async function runWindow(
  ctx: WindowContext,
  entry: PartitionEntry,
  window: Window,
): Promise<WindowResult> {
  const run = new WindowRun(ctx, entry, window);
  const query = {
    partitionToken: entry.token,
    from: window.from,
    to: window.to,
    heartbeatMs: ctx.config.heartbeatMs,
  };
  for await (const record of ctx.source.read(query)) {
    run.progress = observe(run.progress, record);
    if (record.kind === 'data-change') run.pending.push(record);
    const now = ctx.runtime.now();
    if (
      diffMillis(now, run.lastFlush) >= ctx.config.flush.intervalMs ||
      run.pending.length >= MAX_BUFFERED_RECORDS
    ) {
      await run.flush();
    }
    if (diffMillis(now, run.lastCheckpoint) >= ctx.config.flush.checkpointMs && run.acked !== null) {
      await run.checkpoint();
    }
  }
  run.progress = completeWindow(run.progress);
  await run.flush();
  return {
    progress: run.progress,
    entry: run.entry,
    acked: run.acked,
    uncounted: run.uncounted,
    rows: run.rows,
  };
}
