/**
 * BigQuery's history appends misbehaving as the Storage Write API may, through the in-memory sink's own fault
 * hooks (shared/adapters/memory/history-sink.ts). Every choice comes from the run's {@link Decisions}; a fault
 * is counted once an append met it, so the run report shows faults that happened, not faults planned.
 */
import type { MemoryHistory } from '../app/support/ports';
import type { Decisions } from './decisions';

export class HistoryFaults {
  /** The append fault planned and not struck yet. */
  private armed: string | null = null;

  constructor(
    private readonly history: MemoryHistory,
    private readonly rng: Decisions,
  ) {}

  /**
   * A BigQuery fault on the history (bigquery-storage-write.md): an append applied whose answer is lost, so
   * the retry meets ALREADY_EXISTS for its offset (§2.2); RESOURCE_EXHAUSTED on the throughput quota, which clients retry (§3.5);
   * or a stream finalized by the service, further appends refused with STREAM_FINALIZED (§2.3).
   */
  strike(): void {
    const { history } = this;
    const which = this.rng.int(3);
    if (which < 2 && this.armed !== null) return;
    if (which === 0) {
      history.failNextAppend(Object.assign(new Error('14 UNAVAILABLE: answer lost'), { code: 14 }), {
        applied: true,
      });
      this.armed = 'bigquery-append-answer-lost';
    } else if (which === 1) {
      const message = "8 RESOURCE_EXHAUSTED: Exceeds 'AppendRows throughput' quota";
      history.failNextAppend(Object.assign(new Error(message), { code: 8 }));
      this.armed = 'bigquery-resource-exhausted';
    } else {
      const open = history.created.filter((name) => {
        const s = history.stream(name);
        return s !== undefined && !s.finalized && s.type === 'committed';
      });
      if (open.length === 0) return;
      void history.finalizeStream('orders_history', this.rng.pick(open));
      this.rng.note('bigquery-stream-finalized-by-service');
    }
  }

  /** Counts the planned append fault once an append request has met it. */
  noteStruck(): void {
    if (this.armed === null || this.history.pendingAppendFaults > 0) return;
    this.rng.note(this.armed);
    this.armed = null;
  }
}
