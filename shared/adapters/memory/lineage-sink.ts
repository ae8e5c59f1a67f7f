/** In-memory {@link LineageSink}: keeps every event, in arrival order, keyed to a process and a run. */
import { SluiceError } from '../../domain/errors';
import type { RunEvent } from '../../domain/lineage/open-lineage';
import type { LineageReceipt, LineageSink } from '../../ports/lineage-sink';

/** Records events; `failNext` makes the next sends throw, as an unreachable service would. */
export class MemoryLineageSink implements LineageSink {
  readonly events: RunEvent[] = [];
  private failures = 0;
  private failure = new SluiceError('retryable', 'lineage service unavailable');

  constructor(private readonly parent = 'projects/local/locations/us') {}

  /** The next `times` sends (`Infinity`: all until {@link recover}) throw `error`, retryable by default. */
  failNext(times = 1, error = new SluiceError('retryable', 'lineage service unavailable')): void {
    this.failures = times;
    this.failure = error;
  }

  /** Ends an outage started by {@link failNext}. */
  recover(): void {
    this.failures = 0;
  }

  async send(event: RunEvent): Promise<LineageReceipt> {
    if (this.failures > 0) {
      this.failures--;
      throw this.failure;
    }
    this.events.push(structuredClone(event));
    const process = `${this.parent}/processes/${encodeURIComponent(`${event.job.namespace}/${event.job.name}`)}`;
    const run = `${process}/runs/${event.run.runId}`;
    const linked = event.inputs.length > 0 && event.outputs.length > 0;
    return { process, run, lineageEvents: linked ? [`${run}/lineageEvents/${this.events.length}`] : [] };
  }
}
