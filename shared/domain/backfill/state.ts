/**
 * The job state machine. Transitions are pure and total: an event a state does not accept returns
 * `undefined` (the caller leaves the object alone), so a late worker can never resurrect a finished job.
 */
import type { Timestamp } from '../timestamp';
import type { BackfillJob, JobState } from './job';

/** What can happen to a job. */
export type JobEvent =
  | { kind: 'planned'; at: Timestamp }
  | { kind: 'all-partitions-done'; at: Timestamp }
  | { kind: 'failed'; at: Timestamp; error: string }
  | { kind: 'cancelled'; at: Timestamp };

const TERMINAL: ReadonlySet<JobState> = new Set(['succeeded', 'failed', 'cancelled']);

/** True for `succeeded`, `failed` and `cancelled`. */
export function isTerminal(state: JobState): boolean {
  return TERMINAL.has(state);
}

/** The job after `event`, or undefined when the event does not apply in its state. */
export function transition(job: BackfillJob, event: JobEvent): BackfillJob | undefined {
  if (isTerminal(job.state)) return undefined;
  switch (event.kind) {
    case 'planned':
      return job.state === 'planning' ? { ...job, state: 'running', startedAt: event.at } : undefined;
    case 'all-partitions-done':
      return job.state === 'running' ? { ...job, state: 'succeeded', finishedAt: event.at } : undefined;
    case 'failed':
      return { ...job, state: 'failed', finishedAt: event.at, error: event.error };
    case 'cancelled':
      return { ...job, state: 'cancelled', finishedAt: event.at };
  }
}
