/**
 * Reading one window of one partition under a lease: stream the records, fold them with `observe`, flush every
 * closed timestamp to the sinks about every `flush.intervalMs`, and checkpoint the acknowledged boundary into
 * the ledger (renewing the lease) about every `flush.checkpointMs`. Only whole timestamps are flushed, so the
 * position always sits on a boundary and a reader killed at any point resumes exactly after it. History rows
 * go out in canonical order at the partition's history cursors, which are checkpointed with the position, so
 * a window re-read after any failure appends each row at the offset it had before (ADR-1601).
 */

import type { DataChangeRecord } from '../../../domain/change-record';
import { SluiceError } from '../../../domain/errors';
import { canonicalOrder, type HistoryRow } from '../../../domain/history-rows';
import {
  advancePosition,
  type Boundary,
  boundaryOf,
  completeWindow,
  type HistoryCursors,
  observe,
  type PartitionEntry,
  recordHistoryCursors,
  renewLease,
  startWindow,
  type Window,
  type WindowProgress,
} from '../../../domain/ledger';
import { historySources } from '../../../domain/table-rules';
import { diffMillis, type Timestamp } from '../../../domain/timestamp';
import type { LedgerStore } from '../../ledger';
import {
  enrichBatch,
  HistoryStreams,
  historyBatches,
  mergeRejected,
  StreamUnusableError,
  withoutOversizedHistory,
  writeReplica,
} from '../../sinks';
import { setAside } from './window-dead-letters';

/** Flush early when this many records are buffered, whatever the interval. */
const MAX_BUFFERED_RECORDS = 5_000;

/** What a window that failed had acknowledged: the reader records it, so a retry does not redo it. */
export interface WindowPartial {
  /** The boundary every sink acknowledged (null: nothing past the position). */
  acked: Boundary | null;
  /** The history cursors that belong to `acked`. */
  history: HistoryCursors;
  /** Records acknowledged but not yet counted in the ledger. */
  uncounted: number;
}

/**
 * A window that failed: the error as thrown, and what had been acknowledged before it (ADR-1501). The
 * reader writes `partial` with its answer so the retry starts after it.
 */
export class WindowFailure extends Error {
  override readonly name = 'WindowFailure';
  constructor(
    override readonly cause: unknown,
    readonly partial: WindowPartial,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/** Where a window ended: its progress, the last entry written, and the boundary the sinks acknowledged. */
export interface WindowResult {
  progress: WindowProgress;
  entry: PartitionEntry;
  acked: Boundary | null;
  /** The history cursors that belong to `acked` (record them with it). */
  history: HistoryCursors;
  /** The partition's history streams (finalize them when the partition ended; release them in any case). */
  streams: HistoryStreams;
  /** Records acknowledged but not yet counted in the ledger. */
  uncounted: number;
  rows: number;
  /** Records set aside as dead letters (`SLUICE_ON_BAD_RECORD=dead-letter`). */
  deadLettered: number;
  /** True when the window stopped early at its request deadline (the position is where it got to). */
  cutShort: boolean;
}

/** State of a window in progress. */
class WindowRun {
  progress: WindowProgress;
  pending: DataChangeRecord[] = [];
  acked: Boundary | null = null;
  /** The history cursors as of `acked`. */
  ackedHistory: HistoryCursors;
  readonly streams: HistoryStreams;
  uncounted = 0;
  rows = 0;
  deadLettered = 0;
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
    const { config, runtime, sinks } = ctx;
    const policy = { maxAgeMs: config.history.streamMaxAgeMs, maxRows: config.history.streamMaxRows };
    this.streams = new HistoryStreams(
      {
        sink: sinks.history,
        policy,
        now: runtime.now,
        log: runtime.log,
        sourcesOf: (destination) => historySources(config, destination),
        fence: () => this.renew(),
      },
      entry.history,
    );
    this.ackedHistory = entry.history;
  }

  /** Writes every buffered record of a closed timestamp, then remembers the boundary as acknowledged. */
  async flush(): Promise<void> {
    const boundary = boundaryOf(this.progress);
    this.lastFlush = this.ctx.runtime.now();
    if (boundary === null) return;
    const closed = this.pending.filter((r) => r.commitTimestamp <= boundary.at);
    if (closed.length > 0) {
      this.pending = this.pending.slice(closed.length);
      await this.write(canonicalOrder(closed));
      this.uncounted += closed.length;
    }
    this.acked = boundary;
    this.ackedHistory = this.streams.current;
  }

  /**
   * One batch to the sinks. A history stream created or replaced is recorded in the ledger (at the boundary
   * acknowledged so far) before a row goes to it; a stream BigQuery refuses is replaced and the batch's
   * history appended again from the cursors it started with — rows that got in are found there and skipped.
   */
  private async write(records: DataChangeRecord[]): Promise<void> {
    const { ctx, streams } = this;
    // Once per batch: as-of-commit lookups read each dimension once per commit timestamp.
    const enriched = await enrichBatch(ctx.sinks, records);
    const policy = ctx.config.onBadRecord;
    // Rows no request can carry follow the bad-record policy, before anything of the batch is written.
    const { history, rejected: tooLarge } = withoutOversizedHistory(
      await historyBatches(ctx.sinks.tables, records, enriched),
      records,
      policy,
    );
    if (await streams.prepare(history.keys())) await this.checkpoint(streams.current);
    const replica = await writeReplica(ctx.sinks, records, policy, ctx.runtime.log, enriched);
    this.rows += replica.rows;
    // Set aside before the boundary can move past them; the history rows of those the replica refused are
    // written like every other's (all but those too large to append).
    const rejected = mergeRejected(replica.rejected, tooLarge);
    if (rejected.length > 0) {
      const at = this.acked?.at ?? this.entry.position;
      this.deadLettered += await setAside(ctx, this.entry, at, rejected);
    }
    const before = streams.current;
    try {
      await this.appendHistory(history);
    } catch (err) {
      if (!(err instanceof StreamUnusableError)) throw err;
      streams.restore(before);
      await streams.replace(err.destination, err.reason);
      await this.checkpoint(streams.current);
      await this.appendHistory(history);
    }
  }

  private async appendHistory(history: Map<string, HistoryRow[]>): Promise<void> {
    for (const [destination, rows] of history) {
      await this.streams.append(destination, rows);
      this.rows += rows.length;
    }
  }

  /** Renews the lease alone (one compare-and-swap); a `conflict` when another reader holds it now. */
  async renew(): Promise<void> {
    const { holder, config, ledger, runtime } = this.ctx;
    const out = await ledger.updatePartition(this.entry.epoch, this.entry.id, (e, writer) =>
      renewLease(e, { holder, now: runtime.now(), durationMs: config.leaseMs, writer }),
    );
    this.entry = this.held(out);
  }

  /** The entry a compare-and-swap of this reader wrote; a `conflict` when the lease is lost. */
  private held(out: Awaited<ReturnType<LedgerStore['updatePartition']>>): PartitionEntry {
    if (out.kind === 'missing' || out.kind === 'refused') {
      throw new SluiceError(
        'conflict',
        `lost the lease of ${this.entry.id}: ${out.kind === 'refused' ? out.message : 'entry gone'}`,
      );
    }
    return out.entry;
  }

  /**
   * Records the acknowledged boundary and the history cursors that belong to it in the ledger, and renews the
   * lease (one compare-and-swap write).
   */
  async checkpoint(history: HistoryCursors = this.ackedHistory): Promise<void> {
    this.lastCheckpoint = this.ctx.runtime.now();
    const { holder, config, ledger } = this.ctx;
    const acked = this.acked;
    const records = this.uncounted;
    const out = await ledger.updatePartition(this.entry.epoch, this.entry.id, (e, writer) => {
      const moved = acked
        ? advancePosition(e, { holder, boundary: acked, writer, records, history })
        : recordHistoryCursors(e, { holder, writer, history });
      if (!moved.ok) return moved;
      return renewLease(moved.entry, {
        holder,
        now: this.ctx.runtime.now(),
        durationMs: config.leaseMs,
        writer,
      });
    });
    this.entry = this.held(out);
    this.uncounted = 0;
    // The ledger now holds these cursors with the acknowledged boundary: they are what belongs to it.
    this.ackedHistory = history;
  }

  /** What was acknowledged so far (for a failure's record). */
  partial(): WindowPartial {
    return { acked: this.acked, history: this.ackedHistory, uncounted: this.uncounted };
  }
}

import type { WindowContext } from './window-context';

export type { WindowContext } from './window-context';

/**
 * Reads a window to its end (or the partition's end, or its deadline) and flushes everything; does not
 * release the lease. @throws WindowFailure carrying what was acknowledged before the failure.
 */
export async function runWindow(
  ctx: WindowContext,
  entry: PartitionEntry,
  window: Window,
): Promise<WindowResult> {
  const run = new WindowRun(ctx, entry, window);
  try {
    return await readAll(ctx, run);
  } catch (err) {
    run.streams.release();
    throw new WindowFailure(err, run.partial());
  }
}

/** True once the request deadline has passed. */
function pastDeadline(ctx: WindowContext, now: Timestamp): boolean {
  return ctx.deadline !== undefined && now >= ctx.deadline;
}

async function readAll(ctx: WindowContext, run: WindowRun): Promise<WindowResult> {
  const { entry, window } = run;
  const query = {
    partitionToken: entry.token,
    from: window.from,
    to: window.to,
    heartbeatMs: ctx.config.heartbeatMs,
  };
  let cutShort = false;
  for await (const record of ctx.source.read(query)) {
    run.progress = observe(run.progress, record);
    if (record.kind === 'data-change') run.pending.push(record);
    const now = ctx.runtime.now();
    if (pastDeadline(ctx, now)) {
      // Flush what is closed and stop there: the position moves to that boundary and the rest is re-read.
      cutShort = true;
      break;
    }
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
  // A window cut short may have seen only some of the end's child-partitions records (one split can come as
  // several at one timestamp, ordered by record_sequence): it never ends the partition, it releases just before
  // that timestamp (observe closed it there) and the next window reads every record of the end (ADR-2101).
  run.progress = cutShort ? { ...run.progress, end: null } : completeWindow(run.progress);
  await run.flush();
  return {
    progress: run.progress,
    entry: run.entry,
    acked: run.acked,
    history: run.ackedHistory,
    streams: run.streams,
    uncounted: run.uncounted,
    rows: run.rows,
    deadLettered: run.deadLettered,
    cutShort,
  };
}
