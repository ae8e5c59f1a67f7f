/**
 * The lineage reporter: every run event is written as one structured log line (`lineage.event`, the whole
 * OpenLineage event under `openLineage`), then sent to the lineage sink when one is configured. A failed
 * send never reaches the caller — lineage must not stop replication: a retryable failure keeps the event in
 * a bounded outbox, sent again (in order, before any newer event) at the next emit or flush; a permanent one
 * is logged at ERROR and dropped, because sending it again cannot succeed until an operator acts, and the
 * next heartbeat carries the whole graph again.
 */
import { SluiceError } from '../../domain/errors';
import { edgesOf } from '../../domain/lineage/events';
import type { RunEvent } from '../../domain/lineage/open-lineage';
import type { Logger } from '../../domain/log';
import type { LineageSink } from '../../ports/lineage-sink';

/** Counters for status and tests. */
export interface LineageStats {
  /** Events accepted by the sink. */
  sent: number;
  /** Events waiting in the outbox. */
  pending: number;
  /** Send attempts that failed (retryable or not). */
  failures: number;
  /** Events given up: refused permanently, or pushed out of a full outbox. */
  dropped: number;
  lastError: string | null;
}

/** Reporter options. */
export interface LineageReporterOptions {
  /** Undefined: lineage goes to the log only. */
  sink?: LineageSink | undefined;
  log: Logger;
  /** Outbox size (default 100); the oldest event is dropped, loudly, when it overflows. */
  maxPending?: number;
}

/** Logs and sends run events, keeping retryable failures for later. One per function instance. */
export class LineageReporter {
  private readonly outbox: RunEvent[] = [];
  private readonly counters: LineageStats = { sent: 0, pending: 0, failures: 0, dropped: 0, lastError: null };
  private readonly maxPending: number;

  constructor(private readonly options: LineageReporterOptions) {
    this.maxPending = options.maxPending ?? 100;
  }

  /** Logs `event` and sends it after any older pending ones. Never throws. */
  async emit(event: RunEvent): Promise<void> {
    this.options.log.info('lineage.event', {
      eventType: event.eventType,
      job: `${event.job.namespace}/${event.job.name}`,
      runId: event.run.runId,
      inputs: event.inputs.map((d) => `${d.namespace}/${d.name}`),
      outputs: event.outputs.map((d) => `${d.namespace}/${d.name}`),
      edges: edgesOf(event).length,
      openLineage: event,
    });
    if (!this.options.sink) return;
    this.enqueue(event);
    await this.flush();
  }

  /** Sends pending events in order, stopping at the first retryable failure. Never throws. */
  async flush(): Promise<void> {
    const sink = this.options.sink;
    while (sink && this.outbox.length > 0) {
      const event = this.outbox[0]!;
      try {
        await sink.send(event);
        this.outbox.shift();
        this.counters.sent++;
      } catch (err) {
        const e = SluiceError.from(err, 'lineage');
        this.counters.failures++;
        this.counters.lastError = e.message;
        if (e.kind !== 'retryable') {
          this.outbox.shift();
          this.counters.dropped++;
          this.options.log.error('lineage.refused', e, {
            eventType: event.eventType,
            runId: event.run.runId,
          });
          continue;
        }
        this.options.log.warn('lineage.failed', {
          eventType: event.eventType,
          runId: event.run.runId,
          error: e.message,
          pending: this.outbox.length,
        });
        break;
      }
    }
    this.counters.pending = this.outbox.length;
  }

  /** The counters. */
  stats(): LineageStats {
    return { ...this.counters, pending: this.outbox.length };
  }

  private enqueue(event: RunEvent): void {
    this.outbox.push(event);
    while (this.outbox.length > this.maxPending) {
      const lost = this.outbox.shift()!;
      this.counters.dropped++;
      this.options.log.error(
        'lineage.dropped',
        new SluiceError('retryable', `lineage outbox full (${this.maxPending}): dropped the oldest event`),
        { eventType: lost.eventType, runId: lost.run.runId },
      );
    }
  }
}
