/**
 * Injected query faults, for tests of resume and stall logic: each queued end makes one change-stream query
 * fail with a gRPC code after a given number of rows, the way a real stream can break mid-window; a hold keeps
 * one partition query open right after it sent its child-partitions record, the way a reader can stall after
 * it read that record (a paused process, a lost network), until the test releases it.
 */
import { SpannerError, type WireValue } from '../hooks';
import type { ChangeRow } from './model';
import { toGoogleSqlRow, toPostgresRow } from './wire';

interface QueryFault {
  k: number;
  code: number;
  message: string;
}

/** A hold as the admin handle reports it. */
export interface QueryHold {
  id: number;
  /** Only a query of this partition token is held; absent: the first partition query to end. */
  partition?: string;
  /** The partition token of the query being held (or held before), null until one is. */
  held: string | null;
  released: boolean;
}

interface LiveHold extends QueryHold {
  release: () => void;
  gate: Promise<void>;
}

/** The queue of faults for the next change-stream queries of one engine. */
export class QueryFaults {
  private readonly queue: QueryFault[] = [];
  private readonly holdList: LiveHold[] = [];

  /** The next query to start reading returns `k` rows, then fails with `code`. */
  endAfter(k: number, code: number, message?: string): void {
    this.queue.push({
      k,
      code,
      message: message ?? `Injected fault: change-stream query ended after ${k} records.`,
    });
  }

  /**
   * The next partition query (of `partition`, when given) that reaches its child-partitions record sends it,
   * then stays open without another row until {@link release}`(id)`; it then ends as it would have. The
   * initial query (no partition token) is never held.
   */
  holdAfterEnd(id: number, partition?: string): void {
    let release = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    this.holdList.push({
      id,
      ...(partition ? { partition } : {}),
      held: null,
      released: false,
      release,
      gate,
    });
  }

  /** Lets a held query end (or disarms a hold that never struck); false when no hold has that id. */
  release(id: number): boolean {
    const hold = this.holdList.find((h) => h.id === id);
    if (!hold) return false;
    hold.released = true;
    hold.release();
    return true;
  }

  /** Every hold, struck or not, as copies. */
  holds(): QueryHold[] {
    return this.holdList.map(({ id, partition, held, released }) => ({
      id,
      ...(partition ? { partition } : {}),
      held,
      released,
    }));
  }

  /** Releases every hold (the engine is closing: no query may stay open on a gate nobody will open). */
  releaseAll(): void {
    for (const h of this.holdList) this.release(h.id);
  }

  /** Takes the first unstruck, unreleased hold that applies to a query of `token`. */
  private takeHold(token: string): LiveHold | undefined {
    const hold = this.holdList.find(
      (h) => h.held === null && !h.released && (h.partition === undefined || h.partition === token),
    );
    if (hold) hold.held = token;
    return hold;
  }

  /**
   * Renders change rows in the dialect's wire form. The fault is taken when the client starts reading (the
   * generator's first step), not when the query is routed, and the row source is always closed. `partition`
   * is the query's partition token (undefined for the initial query).
   */
  async *render(
    rows: AsyncGenerator<ChangeRow>,
    pg: boolean,
    partition?: string,
  ): AsyncGenerator<WireValue[]> {
    const fault = this.queue.shift();
    let n = 0;
    try {
      for (;;) {
        if (fault && n >= fault.k) throw new SpannerError(fault.code, fault.message);
        const next = await rows.next();
        if (next.done) return;
        n++;
        yield pg ? toPostgresRow(next.value) : toGoogleSqlRow(next.value);
        if (next.value.kind === 'child' && partition !== undefined) await this.takeHold(partition)?.gate;
      }
    } finally {
      await rows.return(undefined);
    }
  }
}
