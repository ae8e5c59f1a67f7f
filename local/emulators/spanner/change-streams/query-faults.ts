/**
 * Injected query ends, for tests of resume logic: each queued fault makes one change-stream query fail with
 * a gRPC code after a given number of rows, the way a real stream can break mid-window.
 */
import { SpannerError, type WireValue } from '../hooks';
import type { ChangeRow } from './model';
import { toGoogleSqlRow, toPostgresRow } from './wire';

interface QueryFault {
  k: number;
  code: number;
  message: string;
}

/** The queue of faults for the next change-stream queries of one engine. */
export class QueryFaults {
  private readonly queue: QueryFault[] = [];

  /** The next query to start reading returns `k` rows, then fails with `code`. */
  endAfter(k: number, code: number, message?: string): void {
    this.queue.push({
      k,
      code,
      message: message ?? `Injected fault: change-stream query ended after ${k} records.`,
    });
  }

  /**
   * Renders change rows in the dialect's wire form. The fault is taken when the client starts reading (the
   * generator's first step), not when the query is routed, and the row source is always closed.
   */
  async *render(rows: AsyncGenerator<ChangeRow>, pg: boolean): AsyncGenerator<WireValue[]> {
    const fault = this.queue.shift();
    let n = 0;
    try {
      for (;;) {
        if (fault && n >= fault.k) throw new SpannerError(fault.code, fault.message);
        const next = await rows.next();
        if (next.done) return;
        n++;
        yield pg ? toPostgresRow(next.value) : toGoogleSqlRow(next.value);
      }
    } finally {
      await rows.return(undefined);
    }
  }
}
