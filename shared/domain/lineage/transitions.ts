/**
 * Which run events a scheduler tick owes, from the manifest before and after it: a ledger that started is a
 * START, a ledger restarted at a new epoch ends the old run (ABORT) and starts a new one, a pipeline that
 * stopped is a FAIL with its reason, and a running one sends a RUNNING heartbeat when one is due.
 */
import type { Manifest } from '../ledger';
import type { RunEventType } from './open-lineage';

/** The manifest fields a run is identified by. */
export type PipelineRun = Pick<Manifest, 'epoch' | 'start' | 'state' | 'reason'>;

/** One event to emit, for the run of `run`. */
export interface PipelineTransition {
  eventType: RunEventType;
  run: PipelineRun;
  error?: string | undefined;
}

function sameRun(a: PipelineRun, b: PipelineRun): boolean {
  return a.epoch === b.epoch && a.start === b.start;
}

/** The events between `before` and `after` (null: no manifest). */
export function pipelineTransitions(
  before: PipelineRun | null,
  after: PipelineRun | null,
  heartbeatDue: boolean,
): PipelineTransition[] {
  if (!after || after.state === 'starting') return [];
  const wasRunning = before?.state === 'running';
  if (after.state === 'stopped') {
    return wasRunning && before ? [{ eventType: 'FAIL', run: after, error: after.reason ?? 'stopped' }] : [];
  }
  if (!before || !wasRunning) return [{ eventType: 'START', run: after }];
  if (!sameRun(before, after)) {
    const error = `the ledger restarted at epoch ${after.epoch}`;
    return [
      { eventType: 'ABORT', run: before, error },
      { eventType: 'START', run: after },
    ];
  }
  return heartbeatDue ? [{ eventType: 'RUNNING', run: after }] : [];
}
