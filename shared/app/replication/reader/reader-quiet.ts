/**
 * A scheduled window's start without a lease (ADR-1201), and the end of a window that saw only heartbeats: the
 * position is written only when it is older than the quiet-checkpoint interval, and quiet partitions back off.
 */
import { type Boundary, checkpointQuiet, type PartitionEntry, type Window } from '../../../domain/ledger';
import type { Logger } from '../../../domain/log';
import { diffMillis, formatTimestamp } from '../../../domain/timestamp';
import type { ChangeSource } from '../../../ports/change-source';
import { newWriterToken, type Versioned } from '../../ledger';
import type { ReaderTask } from '../common';
import { startQuietWindow } from './quiet-window';
import { noop, type TaskOutcome } from './reader-failure';
import { caughtUp, chain, plan, quietTaskKey, type ReaderScope } from './reader-steps';

/** A lease-free start that met a record worth the lease: the lease is held, the window goes on on `source`. */
export interface ActiveStart {
  kind: 'active';
  entry: PartitionEntry;
  window: Window;
  source: ChangeSource;
}

/**
 * Scheduled mode: starts the window without a lease (ADR-1201). Answers an outcome when the task is done
 * (quiet, stale, lost race), `active` when records arrived and the lease is held, `leased-path` otherwise.
 */
export async function startLeaseFree(
  scope: ReaderScope,
  task: ReaderTask,
  holder: string,
  log: Logger,
): Promise<TaskOutcome | ActiveStart | { kind: 'leased-path' }> {
  const { ports, settings, runtime } = scope;
  const current = await ports.ledger.readPartition(task.epoch, task.partition);
  if (!current) return noop(`unknown partition ${task.partition} in epoch ${task.epoch}`);
  const entry = current.value;
  if (task.position < entry.position) {
    return noop(`stale task: position is already ${formatTimestamp(entry.position)}`);
  }
  if (entry.state !== 'ready') return { kind: 'leased-path' };
  const window = plan(scope, entry);
  if (!window) {
    await chain(scope, entry, settings.idleDelayMs, quietTaskKey(entry, runtime.now()));
    return { status: 200, outcome: 'window', detail: 'nothing to read yet' };
  }
  const { config } = settings;
  const ctx = {
    ledger: ports.ledger,
    source: ports.source,
    runtime,
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
  return finishQuiet(scope, current, window, out.boundary, log);
}

/**
 * A window that saw only heartbeats: write the position only when it is older than the quiet-checkpoint
 * interval (one compare-and-swap write, no lease), then chain the next window after a delay that grows with
 * how long the partition has been quiet (about doubling), capped.
 */
export async function finishQuiet(
  scope: ReaderScope,
  current: Versioned<PartitionEntry>,
  window: Window,
  boundary: Boundary | null,
  log: Logger,
): Promise<TaskOutcome> {
  const { settings, runtime } = scope;
  const entry = current.value;
  const quietMs = diffMillis(window.to, entry.position);
  const idle = caughtUp(scope, window);
  // A window cut short by window.maxMs must move the position, or the next one would read it again.
  const due = !idle || quietMs >= (settings.quietCheckpointMs ?? 0);
  let next = entry;
  if (boundary && boundary.at > entry.position && due) {
    const t = checkpointQuiet(entry, { boundary, writer: newWriterToken('reader') });
    if (!t.ok) return noop(t.message);
    const generation = await scope.ports.ledger.writePartition(t.entry, current.generation);
    // Someone else wrote the entry since it was read: they progressed and chain the partition themselves.
    if (!generation) return noop(`partition ${entry.id} changed while its quiet window was read`);
    next = t.entry;
  }
  const { idleDelayMs } = settings;
  const cap = Math.max(idleDelayMs, settings.idleMaxDelayMs ?? idleDelayMs);
  const delayMs = idle ? Math.min(cap, Math.max(idleDelayMs, quietMs)) : null;
  const key = next === entry ? quietTaskKey(entry, runtime.now()) : next.writer;
  await chain(scope, next, delayMs, key);
  log.info('reader.quiet', {
    from: formatTimestamp(window.from),
    to: formatTimestamp(window.to),
    checkpointed: next !== entry,
    nextInMs: delayMs ?? 0,
  });
  const what = next === entry ? 'nothing written' : `checkpointed to ${formatTimestamp(next.position)}`;
  return { status: 200, outcome: 'window', detail: `quiet; ${what}` };
}
