/**
 * Drives dispatch: per queue a token bucket (`maxBurstSize` tokens refilled at `maxDispatchesPerSecond`)
 * and a concurrency cap (`maxConcurrentDispatches`); due tasks go out in schedule order; failures are
 * rescheduled with the retry config's backoff until it gives up. One unref'd timer wakes the loop at the next
 * due time or token, and stop() clears it and aborts requests in flight, so a test process exits.
 */
import { backoffMs, retriesExhausted } from './backoff';
import { type AttemptResult, dispatchHeaders, outcomeCode, sendAttempt } from './dispatch';
import type { QueueEntry, TasksState } from './state';
import type { TaskState } from './task';
import { nowMs } from './wire';

interface Bucket {
  tokens: number;
  refilledAtMs: number;
  inFlight: number;
}

/** Lets a fault rule stand in for the target's answer (see emulator.ts: `dispatch` rules). */
export type DispatchHook = (task: TaskState) => Promise<AttemptResult | undefined>;

/** The dispatch loop. */
export class Dispatcher {
  private readonly buckets = new Map<string, Bucket>();
  private readonly aborts = new Set<AbortController>();
  private timer?: NodeJS.Timeout;
  private wakeAtMs = Number.POSITIVE_INFINITY;
  private stopped = false;

  constructor(
    private readonly state: TasksState,
    private readonly hook: DispatchHook,
    /** Base URL App Engine tasks are sent to (their relative URI appended); unset: such attempts fail. */
    private readonly appEngineUrl?: string,
  ) {}

  /** Sends one attempt to the task's target. */
  private send(task: TaskState, nowMs: number, signal: AbortSignal): Promise<AttemptResult> {
    if (!task.appEngine) return sendAttempt(task, dispatchHeaders(task, nowMs), signal);
    if (!this.appEngineUrl)
      return Promise.resolve({
        failure: 'connection',
        message: 'no App Engine target: start the Tasks emulator with --app-engine-url <url>',
      });
    const target = `${this.appEngineUrl.replace(/\/$/, '')}${task.appEngine.relativeUri}`;
    return sendAttempt(task, dispatchHeaders(task, nowMs), signal, target);
  }

  /** Re-evaluates soon (after any state change). */
  poke(): void {
    this.schedule(nowMs());
  }

  /** Dispatches one task now, ignoring pause and rate limits (RunTask). */
  runNow(task: TaskState): void {
    if (task.outcome === 'queued') this.start(task, this.bucket(task.queue));
  }

  /** Drops a deleted queue's token bucket, so a queue re-created under the name starts full. */
  forget(queue: string): void {
    this.buckets.delete(queue);
  }

  /** Requests in flight per queue (for inspection). */
  inFlight(queue: string): number {
    return this.buckets.get(queue)?.inFlight ?? 0;
  }

  /** Stops the loop and aborts requests in flight. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    for (const a of this.aborts) a.abort();
  }

  private schedule(atMs: number): void {
    if (this.stopped || atMs >= this.wakeAtMs) return;
    if (this.timer) clearTimeout(this.timer);
    this.wakeAtMs = atMs;
    this.timer = setTimeout(() => this.pump(), Math.max(0, atMs - nowMs()));
    this.timer.unref();
  }

  private bucket(queue: string): Bucket {
    let b = this.buckets.get(queue);
    if (!b) {
      const burst = this.state.queues.get(queue)?.config.rateLimits.maxBurstSize ?? 1;
      b = { tokens: burst, refilledAtMs: nowMs(), inFlight: 0 };
      this.buckets.set(queue, b);
    }
    return b;
  }

  private pump(): void {
    this.timer = undefined;
    this.wakeAtMs = Number.POSITIVE_INFINITY;
    const now = nowMs();
    let next = Number.POSITIVE_INFINITY;
    for (const [name, entry] of this.state.queues) {
      if (!entry.config.paused) next = Math.min(next, this.pumpQueue(name, entry, now));
    }
    if (next < Number.POSITIVE_INFINITY) this.schedule(next);
  }

  /** Starts what the queue's limits allow; returns when it should be looked at again. */
  private pumpQueue(name: string, entry: QueueEntry, now: number): number {
    const {
      maxDispatchesPerSecond: rate,
      maxBurstSize: burst,
      maxConcurrentDispatches: cap,
    } = entry.config.rateLimits;
    const b = this.bucket(name);
    b.tokens = Math.min(burst, b.tokens + ((now - b.refilledAtMs) / 1000) * rate);
    b.refilledAtMs = now;
    const queued = [...entry.tasks.values()].filter((t) => t.outcome === 'queued');
    const due = queued
      .filter((t) => t.scheduleTimeMs <= now)
      .sort((x, y) => x.scheduleTimeMs - y.scheduleTimeMs);
    let next = Math.min(...queued.filter((t) => t.scheduleTimeMs > now).map((t) => t.scheduleTimeMs));
    for (const task of due) {
      if (b.inFlight >= cap) break; // a finishing dispatch pokes the loop
      if (b.tokens < 1) {
        next = Math.min(next, now + ((1 - b.tokens) / rate) * 1000);
        break;
      }
      b.tokens -= 1;
      this.start(task, b);
    }
    return next;
  }

  private start(task: TaskState, b: Bucket): void {
    const now = nowMs();
    task.outcome = 'in-flight';
    task.dispatchCount += 1;
    task.attempts.push({ scheduleTimeMs: task.scheduleTimeMs, dispatchTimeMs: now });
    b.inFlight += 1;
    this.state.changed();
    const abort = new AbortController();
    this.aborts.add(abort);
    const attempt = async (): Promise<AttemptResult> =>
      (await this.hook(task)) ?? this.send(task, now, abort.signal);
    attempt()
      .catch((err: unknown): AttemptResult => ({ failure: 'connection', message: String(err) }))
      .then((result) => {
        this.aborts.delete(abort);
        b.inFlight -= 1;
        if (!this.stopped) this.finish(task, result);
      });
  }

  private finish(task: TaskState, result: AttemptResult): void {
    const now = nowMs();
    const attempt = task.attempts[task.attempts.length - 1];
    if (attempt)
      Object.assign(attempt, {
        responseTimeMs: now,
        httpStatus: result.httpStatus,
        code: outcomeCode(result),
        message: result.message,
      });
    if (result.httpStatus !== undefined && result.httpStatus < 500) task.responseCount += 1;
    if (task.outcome !== 'in-flight') {
      this.poke(); // deleted or purged meanwhile
      return;
    }
    const ok = result.httpStatus !== undefined && result.httpStatus >= 200 && result.httpStatus < 300;
    const entry = this.state.queues.get(task.queue);
    const firstMs = task.attempts[0]?.dispatchTimeMs ?? now;
    if (ok) this.state.finish(task, 'succeeded', now);
    else if (!entry || retriesExhausted(entry.config.retry, task.dispatchCount, now - firstMs)) {
      this.state.finish(task, 'failed', now);
    } else {
      task.outcome = 'queued';
      task.scheduleTimeMs = now + backoffMs(entry.config.retry, task.dispatchCount);
    }
    this.state.changed();
    this.poke();
  }
}
