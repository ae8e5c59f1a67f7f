/**
 * The history streams of one partition during a window (ADR-1601): the cursors as the ledger holds them,
 * advanced as rows are acknowledged; a stream created on the first history row for a table, and replaced —
 * finalized, counted, a new one created — when it is due (schema changed, age, size) or BigQuery refuses it.
 * A cursor that changed this way must be recorded in the ledger (with the position it belongs to) before any
 * row goes to its new stream; {@link HistoryStreams.prepare} and {@link HistoryStreams.replace} say so.
 */

import type { HistoryRow } from '../../domain/history-rows';
import {
  type HistoryCursor,
  type HistoryCursors,
  HistorySourcesChangedError,
  offsetForSources,
  type RotationPolicy,
  type RotationReason,
  rotationDue,
} from '../../domain/ledger';
import type { Logger } from '../../domain/log';
import { formatTimestamp, type Timestamp } from '../../domain/timestamp';
import type { HistorySink } from '../../ports/sinks';
import { type AppendOutcome, appendExactlyOnce } from './history-append';

/** What the streams of a partition need. */
export interface HistoryStreamsContext {
  sink: HistorySink;
  policy: RotationPolicy;
  now: () => Timestamp;
  log: Logger;
  /** Which source tables feed a history table under the configuration (`historySources`, ADR-1605). */
  sourcesOf: (destination: string) => string;
  /**
   * Renews the partition's lease in one ledger compare-and-swap, throwing a `conflict` when it was lost: run
   * before a stream is finalized to replace it, so a reader whose lease expired cannot finalize the stream its
   * successor is writing to (ADR-1607).
   */
  fence: () => Promise<void>;
}

/** Cursors of one partition's history tables, in memory while a window runs. */
export class HistoryStreams {
  private readonly cursors: Record<string, HistoryCursor>;
  /** Streams this instance opened connections to (closed when the window ends). */
  private readonly touched = new Set<string>();

  constructor(
    private readonly ctx: HistoryStreamsContext,
    initial: HistoryCursors,
  ) {
    this.cursors = { ...initial };
  }

  /** The cursors as they are now (after every acknowledged append). */
  get current(): HistoryCursors {
    return { ...this.cursors };
  }

  /** Goes back to cursors taken from {@link current} (before a batch that is to be appended again). */
  restore(cursors: HistoryCursors): void {
    for (const key of Object.keys(this.cursors)) delete this.cursors[key];
    Object.assign(this.cursors, cursors);
  }

  /**
   * Makes every destination ready for rows: creates a stream where there is none, replaces one that is due.
   * True when a cursor changed: record the cursors in the ledger before appending.
   */
  async prepare(destinations: Iterable<string>): Promise<boolean> {
    let changed = false;
    for (const destination of destinations) {
      const cursor = this.cursors[destination];
      if (!cursor) {
        await this.open(destination, 0, 'new');
        changed = true;
        continue;
      }
      const sources = this.ctx.sourcesOf(destination);
      if (cursor.sources === undefined) {
        // Written before the sources were recorded: they are taken to be today's (ADR-1605 trade-off).
        this.cursors[destination] = { ...cursor, sources };
        changed = true;
      }
      const reason = rotationDue(this.cursors[destination]!, {
        now: this.ctx.now(),
        tableSchema: await this.ctx.sink.tableSchema(destination),
        sources,
        policy: this.ctx.policy,
      });
      if (reason) {
        await this.replace(destination, reason);
        changed = true;
      }
    }
    return changed;
  }

  /**
   * Replaces a destination's stream: renew the lease (a reader that lost it stops here), finalize the stream
   * (so nothing more can be appended there), read its row
   * count, and carry the rows it holds past the cursor into the new cursor's (negative) offset.
   * @throws SluiceError (`permanent`) when the stream holds fewer rows than the ledger counts as written.
   * @throws HistorySourcesChangedError when it holds rows past the cursor written while other source tables
   *   fed the history table.
   */
  async replace(destination: string, reason: RotationReason): Promise<void> {
    const old = this.cursors[destination];
    if (!old) return this.open(destination, 0, 'new');
    await this.ctx.fence();
    this.ctx.sink.releaseStreams([old.stream]);
    const counted = await this.finalizeCounted(destination, old);
    if (counted === null) {
      this.ctx.log.warn('history.stream-count-unknown', {
        destination,
        stream: old.stream,
        reason,
        assumed: Math.max(old.offset, 0),
        detail:
          'BigQuery reported no row count for this stream (it no longer knows it, or did not say); taken to hold ' +
          'what the ledger recorded. Rows an attempt appended past that and never recorded would be written again.',
      });
    }
    const rowCount = counted ?? Math.max(old.offset, 0);
    await this.open(destination, this.offsetAfter(destination, old, rowCount), reason, {
      stream: old.stream,
      rowCount,
    });
  }

  /**
   * Finalizes a cursor's stream and returns its row count, null when unknown: gone, or answered as 0 while the
   * ledger counts rows acknowledged — proto3 gives row_count no presence, so an answer without it reads as 0,
   * and that is never taken for rows BigQuery lost.
   */
  private async finalizeCounted(destination: string, cursor: HistoryCursor): Promise<number | null> {
    const answered = await this.ctx.sink.finalizeStream(destination, cursor.stream);
    return answered === 0 && cursor.offset > 0 ? null : answered;
  }

  /** The new stream's offset ({@link offsetForSources}); a change of sources it refuses is logged at ERROR. */
  private offsetAfter(destination: string, old: HistoryCursor, rowCount: number): number {
    try {
      return offsetForSources(old, rowCount, { destination, sources: this.ctx.sourcesOf(destination) });
    } catch (err) {
      if (err instanceof HistorySourcesChangedError) {
        const { before, now, pastCursor } = err;
        this.ctx.log.error('history.sources-changed', err, {
          destination,
          stream: old.stream,
          before,
          now,
          pastCursor,
        });
      }
      throw err;
    }
  }

  private async open(
    destination: string,
    offset: number,
    reason: RotationReason | 'new',
    previous?: { stream: string; rowCount: number },
  ): Promise<void> {
    const created = await this.ctx.sink.createStream(destination, 'committed');
    this.cursors[destination] = {
      stream: created.name,
      offset,
      createdAt: created.createdAt,
      schema: created.schema,
      sources: this.ctx.sourcesOf(destination),
    };
    this.ctx.log.info(reason === 'new' ? 'history.stream-created' : 'history.stream-rotated', {
      destination,
      stream: created.name,
      ...(previous ? { previous: previous.stream, previousRows: previous.rowCount, reason } : {}),
      ...(offset < 0 ? { carried: -offset } : {}),
      createdAt: formatTimestamp(created.createdAt),
    });
  }

  /**
   * Appends the next rows of `destination` exactly once and advances its cursor.
   * @throws StreamUnusableError (replace the stream, record the cursors, append again) or the sink's error.
   */
  async append(destination: string, rows: HistoryRow[]): Promise<AppendOutcome> {
    const cursor = this.cursors[destination];
    if (!cursor) throw new Error(`no history stream prepared for ${destination}`);
    this.touched.add(cursor.stream);
    const out = await appendExactlyOnce(this.ctx.sink, destination, cursor, rows);
    this.cursors[destination] = out.cursor;
    if (out.skipped > 0) {
      this.ctx.log.info('history.rows-already-written', {
        destination,
        stream: cursor.stream,
        rows: rows.length,
        skipped: out.skipped,
        probes: out.probes,
      });
    }
    return out;
  }

  /**
   * The partition ended: finalizes every stream and checks that each holds exactly what its cursor says
   * (a difference is logged as an error: BigQuery and the ledger disagree). Best effort: a failure is logged.
   */
  async finalizeAll(): Promise<void> {
    for (const [destination, cursor] of Object.entries(this.cursors)) {
      try {
        this.ctx.sink.releaseStreams([cursor.stream]);
        const rows = await this.finalizeCounted(destination, cursor);
        if (rows !== null && rows !== Math.max(cursor.offset, 0)) {
          this.ctx.log.error('history.stream-count-mismatch', undefined, {
            destination,
            stream: cursor.stream,
            rows,
            expected: Math.max(cursor.offset, 0),
          });
        }
      } catch (err) {
        this.ctx.log.warn('history.finalize-failed', {
          destination,
          stream: cursor.stream,
          error: String(err),
        });
      }
    }
  }

  /** Closes the connections this window opened (the next window may run on another instance). */
  release(): void {
    this.ctx.sink.releaseStreams([...this.touched]);
    this.touched.clear();
  }
}
