/**
 * The ledger and queue steps a reader task is made of: take the lease, plan the window, advance and release,
 * and chain the next window. Each is one compare-and-swap write or one named task, so a duplicate or stale task
 * decides the same harmless thing.
 */
import { SluiceError } from '../../../domain/errors';
import {
  acquireLease,
  advancePosition,
  type PartitionEntry,
  planWindow,
  releaseLease,
  type Transition,
  type Window,
} from '../../../domain/ledger';
import { addMillis, formatTimestamp, type Timestamp } from '../../../domain/timestamp';
import type { ChangeSource } from '../../../ports/change-source';
import type { DimensionReader } from '../../../ports/dimension-reader';
import type { HistorySink, ReplicaSink } from '../../../ports/sinks';
import type { SpannerCatalog } from '../../../ports/spanner-catalog';
import type { TaskQueue } from '../../../ports/task-queue';
import { type AppSettings, epochMillis, type Runtime } from '../../common';
import type { EnrichmentCounters } from '../../enrichment';
import type { DeadLetterStore, LedgerStore } from '../../ledger';
import { enqueueReaderTask, type ReaderTask } from '../common';
import type { WindowResult } from './window-run';

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
  /** Point reads of dimension tables, for the tables' lookups (docs/enrichment.md). */
  dimensions?: DimensionReader | undefined;
  /** Where this instance publishes its lookups' counters for the status. */
  enrichmentCounters?: EnrichmentCounters | undefined;
}

/** What every step of a reader task needs: the ports, the settings and the clock. */
export interface ReaderScope {
  ports: ReaderPorts;
  settings: AppSettings;
  runtime: Runtime;
}

/** Task key of the window after a quiet one that wrote nothing: unique per window, as the writer is unchanged. */
export function quietTaskKey(entry: PartitionEntry, at: Timestamp): string {
  return `${entry.writer}#${at.toString()}`;
}

/** Takes the lease; a string says why the task is a no-op. */
export async function acquire(
  scope: ReaderScope,
  task: ReaderTask,
  holder: string,
): Promise<PartitionEntry | string> {
  const { config } = scope.settings;
  const out = await scope.ports.ledger.updatePartition(task.epoch, task.partition, (e, writer) =>
    task.position < e.position
      ? null
      : acquireLease(e, { holder, now: scope.runtime.now(), durationMs: config.leaseMs, writer }),
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

/** The entry's next window as of now; null when there is nothing to read yet. */
export function plan(scope: ReaderScope, entry: PartitionEntry): Window | null {
  const config = scope.settings.config;
  return planWindow(entry, scope.runtime.now(), {
    mode: config.mode,
    maxWindowMs: config.window.maxMs,
    longPollMs: config.window.longPollMs,
  });
}

/** Advances to the acknowledged boundary and releases the lease, in one write. */
export async function release(
  scope: ReaderScope,
  entry: PartitionEntry,
  holder: string,
  result: WindowResult | null,
): Promise<PartitionEntry> {
  const out = await scope.ports.ledger.updatePartition(entry.epoch, entry.id, (e, writer): Transition => {
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

/** True when the window reached about now (scheduled mode then waits before the next window). */
export function caughtUp(scope: ReaderScope, window: Window): boolean {
  return window.to >= addMillis(scope.runtime.now(), -scope.settings.idleDelayMs);
}

/** Scheduled mode waits the idle delay once caught up; continuous mode and a partition behind never wait. */
export function idleDelay(scope: ReaderScope, idle: boolean): number | null {
  return scope.settings.config.mode === 'scheduled' && idle ? scope.settings.idleDelayMs : null;
}

/**
 * Enqueues the next window, after `delayMs` (null: at once). The task is named after the entry's last write
 * (`key`, by default its writer token), so the scheduler's tick and this chain name the same task; a quiet
 * window that wrote nothing passes a key of its own, or its task would carry the name of the one just run.
 */
export async function chain(
  scope: ReaderScope,
  entry: PartitionEntry,
  delayMs: number | null,
  key = entry.writer,
): Promise<void> {
  const config = scope.settings.config;
  const notBeforeMs = delayMs === null ? undefined : epochMillis(scope.runtime.now()) + delayMs;
  const task = {
    pipeline: config.pipeline,
    epoch: entry.epoch,
    partition: entry.id,
    position: entry.position,
  };
  await enqueueReaderTask(
    scope.ports.queue,
    scope.settings.readerUrl,
    task,
    key,
    notBeforeMs === undefined ? {} : { notBeforeMs },
  );
}
