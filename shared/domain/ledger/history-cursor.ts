/**
 * History cursors (ADR-1601): per partition and history table, the COMMITTED write stream its history rows
 * go to and the offset, in that stream, of the first history row after the partition's position. The cursor
 * is written with the position in the same compare-and-swap, so a window re-read from the position sends
 * every row at the offset an earlier attempt used, and BigQuery answers `ALREADY_EXISTS` for each row that
 * attempt got in: nothing is written twice.
 *
 * A negative offset means the first `-offset` rows after the position are in the stream this one replaced
 * (finalized, so nothing more can join them there): they are skipped, not sent.
 */
import { SluiceError } from '../errors';
import { diffMillis, type Timestamp } from '../timestamp';

/** Where one partition's history rows for one table go next. */
export interface HistoryCursor {
  /** Full stream name, `projects/…/datasets/…/tables/…/streams/…`. */
  stream: string;
  /** Offset in `stream` of the first history row after the position (negative: see the module comment). */
  offset: number;
  /** When the stream was created (rotation by age). */
  createdAt: Timestamp;
  /** Fingerprint of the table schema the stream was created with (rotation after a schema change). */
  schema: string;
  /**
   * Which source tables feed the history table (`historySources`) when rows went to this stream: the rows
   * after the position are a function of it (ADR-1605). Absent in cursors written before it was recorded.
   */
  sources?: string;
}

/** Cursors of one partition, by history table (destination). */
export type HistoryCursors = Readonly<Record<string, HistoryCursor>>;

/** Why a stream is replaced by a new one. */
export type RotationReason =
  /** The table's schema is no longer the one the stream was created with. */
  | 'schema'
  /** Older than the configured bound. */
  | 'age'
  /** Holds the configured number of rows. */
  | 'size'
  /** BigQuery refused an append because the stream is finalized. */
  | 'finalized'
  /** BigQuery no longer knows the stream (it expires three days after its last append). */
  | 'gone'
  /** BigQuery refused the writer's schema for the stream. */
  | 'schema-refused'
  /** An offset the ledger counts as written is beyond the stream's end: re-read the stream's row count. */
  | 'out-of-range'
  /** Another set of source tables feeds the history table now (`SLUICE_TABLES` changed). */
  | 'sources';

/** The bounds a stream is rotated at. */
export interface RotationPolicy {
  maxAgeMs: number;
  maxRows: number;
}

/**
 * Whether a stream should be replaced before more rows go to it: other source tables feeding the history
 * table than when rows went to it, a schema other than the table's current one, an age or a size at the
 * policy's bound. Null when it can take more rows.
 */
export function rotationDue(
  cursor: HistoryCursor,
  args: { now: Timestamp; tableSchema: string; sources: string; policy: RotationPolicy },
): RotationReason | null {
  if (cursor.sources !== undefined && cursor.sources !== args.sources) return 'sources';
  if (cursor.schema !== args.tableSchema) return 'schema';
  if (diffMillis(args.now, cursor.createdAt) >= args.policy.maxAgeMs) return 'age';
  if (cursor.offset >= args.policy.maxRows) return 'size';
  return null;
}

/**
 * The offset of the first row after the position in a new stream that replaces `cursor`'s, given the row
 * count of the old stream once finalized. Rows appended there past the cursor (by an attempt that crashed,
 * or one whose lease expired while it was still writing) are rows after the position too: the new offset is
 * negative by that many, so they are skipped rather than written again.
 * @throws SluiceError (`permanent`) when the stream holds fewer rows than the ledger recorded as
 *   acknowledged: BigQuery and the ledger disagree, and writing on would hide it.
 */
export function carriedOffset(cursor: HistoryCursor, rowCount: number): number {
  const acknowledged = Math.max(cursor.offset, 0);
  if (rowCount < acknowledged) {
    throw new SluiceError(
      'permanent',
      `history stream ${cursor.stream} holds ${rowCount} rows but the ledger recorded ${acknowledged} as acknowledged: ` +
        'rows before the position may be missing from the history table; inspect the stream and the ledger entry',
    );
  }
  return cursor.offset - rowCount;
}

/**
 * The history table is fed by another set of source tables than when rows went past the ledger's cursor
 * (a crash, or a reader that lost its lease): the rows the re-read puts at those offsets are not the rows
 * there, so neither skipping nor writing them is right. Permanent: an operator restores the mapping.
 */
export class HistorySourcesChangedError extends SluiceError {
  constructor(
    readonly destination: string,
    readonly stream: string,
    readonly before: string,
    readonly now: string,
    readonly pastCursor: number,
  ) {
    super(
      'permanent',
      `history.sources-changed: history table ${destination} was fed by source tables [${before}] when ` +
        `${pastCursor} rows went to stream ${stream} past the position the ledger recorded, and is fed by ` +
        `[${now}] now, so re-reading the partition would not line those rows up. Restore the SLUICE_TABLES ` +
        'entries that fed it, retry the partition and let it read past the rows, then change SLUICE_TABLES again',
    );
  }
}

/**
 * The offset in a new stream for `cursor`'s rows after its stream was finalized with `rowCount` rows, when the
 * history table is now fed by `sources`: as {@link carriedOffset}, but with other source tables than the
 * cursor's only when no row lies past the cursor (none carried, none pending).
 * @throws HistorySourcesChangedError when rows past the cursor were written with the other sources.
 * @throws SluiceError (`permanent`) as {@link carriedOffset}.
 */
export function offsetForSources(
  cursor: HistoryCursor,
  rowCount: number,
  args: { destination: string; sources: string },
): number {
  const offset = carriedOffset(cursor, rowCount);
  if (cursor.sources === undefined || cursor.sources === args.sources || offset === 0) return offset;
  const pastCursor = rowCount - cursor.offset;
  throw new HistorySourcesChangedError(
    args.destination,
    cursor.stream,
    cursor.sources,
    args.sources,
    pastCursor,
  );
}

/** The cursor after `rows` more rows of the partition's history are in the stream (written or found there). */
export function advanceCursor(cursor: HistoryCursor, rows: number): HistoryCursor {
  return rows === 0 ? cursor : { ...cursor, offset: cursor.offset + rows };
}

/** True when two cursor sets are equal (same tables, streams and offsets). */
export function sameCursors(a: HistoryCursors, b: HistoryCursors): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => {
    const x = a[k];
    const y = b[k];
    return (
      x !== undefined &&
      y !== undefined &&
      x.stream === y.stream &&
      x.offset === y.offset &&
      x.createdAt === y.createdAt &&
      x.schema === y.schema &&
      x.sources === y.sources
    );
  });
}

/** The cursors with keys in sorted order (entries serialize deterministically). */
export function sortedCursors(cursors: HistoryCursors): HistoryCursors {
  return Object.fromEntries(
    Object.keys(cursors)
      .sort()
      .map((k) => [k, cursors[k]!]),
  );
}
