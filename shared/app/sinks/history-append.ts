/**
 * Exactly-once appends of a partition's history rows at its cursor (ADR-1601). Row `i` of what follows the
 * position always goes to offset `cursor.offset + i` of the cursor's stream: the rows after a position are a
 * pure function of the change stream (the reader sorts each flush canonically), so a window re-read after a
 * crash sends every row to the offset the crashed attempt used. BigQuery refuses a request whose first offset
 * is already written (`ALREADY_EXISTS`) — but such a request may reach past what the crashed attempt wrote,
 * because flush and request boundaries depend on timing. The end of the stream is then found by probing with
 * single rows: a probe at the end appends exactly the row that belongs there, one below it is refused, one
 * beyond it is `OUT_OF_RANGE`. Nothing is ever appended at an offset other than its own.
 */
import { SluiceError } from '../../domain/errors';
import type { HistoryRow } from '../../domain/history-rows';
import { advanceCursor, type HistoryCursor, type RotationReason } from '../../domain/ledger';
import type { HistorySink, OffsetAppendResult } from '../../ports/sinks';

/**
 * The cursor's stream cannot take the rows: finalized, gone, of an older schema, or shorter than the ledger
 * says (`out-of-range`). The caller replaces the stream (finalize, count, create) and appends again.
 */
export class StreamUnusableError extends SluiceError {
  constructor(
    readonly destination: string,
    readonly stream: string,
    readonly reason: RotationReason,
    message: string,
  ) {
    super('retryable', `history stream ${stream} of ${destination} is unusable (${reason}): ${message}`);
  }
}

/** What an append did: the cursor after the rows, and how many were written, found already there, or probed. */
export interface AppendOutcome {
  cursor: HistoryCursor;
  written: number;
  /** Rows found in the stream already (an earlier attempt's) or in the stream this one replaced. */
  skipped: number;
  /** Single-row requests sent to find where an earlier attempt stopped. */
  probes: number;
}

class Appender {
  written = 0;
  probes = 0;

  constructor(
    private readonly sink: HistorySink,
    private readonly destination: string,
    private readonly cursor: HistoryCursor,
    private readonly rows: HistoryRow[],
  ) {}

  private offsetOf(index: number): number {
    return this.cursor.offset + index;
  }

  private unusable(r: OffsetAppendResult & { kind: 'unusable' | 'out-of-range' }): StreamUnusableError {
    const message =
      r.kind === 'unusable'
        ? r.message
        : `offset ${r.offset} is beyond the end of the stream, which the ledger says holds more rows`;
    const reason = r.kind === 'unusable' ? r.reason : 'out-of-range';
    return new StreamUnusableError(this.destination, this.cursor.stream, reason, message);
  }

  /** Sends rows from `index` on; returns the index of the first row not yet known to be in the stream. */
  async send(index: number): Promise<number> {
    const rest = this.rows.slice(index);
    const r = await this.sink.appendAt(this.destination, this.cursor.stream, this.offsetOf(index), rest);
    switch (r.kind) {
      case 'appended':
        this.written += rest.length;
        return this.rows.length;
      case 'already-exists': {
        const at = r.offset - this.cursor.offset;
        this.written += at - index;
        return this.findEnd(at);
      }
      default:
        throw this.unusable(r);
    }
  }

  /** One row at its own offset: `appended` means the stream ended right there (and now holds it). */
  private async probe(index: number): Promise<'appended' | 'exists' | 'beyond'> {
    this.probes++;
    const r = await this.sink.appendAt(this.destination, this.cursor.stream, this.offsetOf(index), [
      this.rows[index]!,
    ]);
    if (r.kind === 'appended') {
      this.written++;
      return 'appended';
    }
    if (r.kind === 'already-exists') return 'exists';
    if (r.kind === 'out-of-range') return 'beyond';
    throw this.unusable(r);
  }

  /**
   * Row `known` is in the stream; finds the first row that is not (binary search by probes), appending it
   * if the probe lands there. Returns the index to continue from.
   */
  private async findEnd(known: number): Promise<number> {
    const last = this.rows.length - 1;
    if (known >= last) return this.rows.length;
    const top = await this.probe(last);
    if (top !== 'beyond') return this.rows.length;
    // The end lies in [known + 1, last - 1] (measured from the cursor).
    let lo = known + 1;
    let hi = last - 1;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const seen = await this.probe(mid);
      if (seen === 'appended') return mid + 1;
      if (seen === 'exists') lo = mid + 1;
      else hi = mid - 1;
    }
    if (hi < lo) {
      throw this.unusable({ kind: 'out-of-range', offset: this.offsetOf(lo) });
    }
    return lo;
  }
}

/**
 * Appends `rows` — the next history rows of the partition for `destination`, in canonical order — at
 * `cursor`, exactly once: rows an earlier attempt wrote (or that sit in the stream this one replaced, for a
 * negative offset) are skipped. Returns the cursor after them.
 * @throws StreamUnusableError when the stream must be replaced first; any sink error as is (retry the flush).
 */
export async function appendExactlyOnce(
  sink: HistorySink,
  destination: string,
  cursor: HistoryCursor,
  rows: HistoryRow[],
): Promise<AppendOutcome> {
  const appender = new Appender(sink, destination, cursor, rows);
  let index = Math.min(rows.length, Math.max(0, -cursor.offset));
  while (index < rows.length) index = await appender.send(index);
  return {
    cursor: advanceCursor(cursor, rows.length),
    written: appender.written,
    skipped: rows.length - appender.written,
    probes: appender.probes,
  };
}
