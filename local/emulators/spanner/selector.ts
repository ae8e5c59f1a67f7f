/**
 * Transaction selectors and timestamp bounds: which snapshot a request reads, which transaction it
 * belongs to, and what the response's metadata reports about it.
 */
import type { EmulatedDatabase, Txn } from './database';
import { fromTimestamp, type TimestampJson, toTimestamp } from './grpc-util';
import { Code, SpannerError } from './hooks';
import type { ReadView } from './storage';

/** Plain-object `TransactionOptions`. */
export interface TxnOptionsJson {
  mode?: string;
  readOnly?: {
    timestampBound?: string;
    strong?: boolean;
    minReadTimestamp?: TimestampJson;
    maxStaleness?: TimestampJson;
    readTimestamp?: TimestampJson;
    exactStaleness?: TimestampJson;
    returnReadTimestamp?: boolean;
  };
  readWrite?: unknown;
  partitionedDml?: unknown;
  excludeTxnFromChangeStreams?: boolean;
}

/** Plain-object `TransactionSelector`. */
export interface SelectorJson {
  selector?: string;
  singleUse?: TxnOptionsJson;
  id?: Buffer;
  begin?: TxnOptionsJson;
}

/** A resolved selector. */
export interface Resolved {
  view: ReadView;
  txn?: Txn;
  /** `Transaction` message to put in the response metadata, if any. */
  metadata?: { id?: Buffer; readTimestamp?: { seconds: string; nanos: number } };
}

/** The snapshot timestamp a read-only bound selects (waiting for a future exact timestamp). */
export async function boundNs(db: EmulatedDatabase, ro: TxnOptionsJson['readOnly']): Promise<bigint> {
  const now = db.clock.nowNs();
  let ns = now;
  if (ro?.timestampBound === 'readTimestamp') ns = fromTimestamp(ro.readTimestamp);
  if (ro?.timestampBound === 'exactStaleness') ns = now - fromTimestamp(ro.exactStaleness);
  if (ns > now) {
    const waitMs = Number((ns - now) / 1_000_000n) + 1;
    if (waitMs > 3_600_000)
      throw new SpannerError(Code.INVALID_ARGUMENT, 'Read timestamp is too far in the future');
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
  db.checkReadable(ns);
  return ns;
}

/** Starts a transaction from options (BeginTransaction or inline begin). */
export async function beginFrom(
  db: EmulatedDatabase,
  opts: TxnOptionsJson | undefined,
  tag = '',
): Promise<Txn> {
  checkExclusion(opts);
  if (opts?.mode === 'partitionedDml') {
    const pdml = db.begin(false, db.clock.nowNs(), tag, true);
    if (opts.excludeTxnFromChangeStreams) pdml.excludeFromChangeStreams = true;
    return pdml;
  }
  if (opts?.mode === 'readOnly') return db.begin(true, await boundNs(db, opts.readOnly), tag);
  const txn = db.begin(false, db.clock.nowNs(), tag);
  if (opts?.excludeTxnFromChangeStreams) txn.excludeFromChangeStreams = true;
  return txn;
}

/** `exclude_txn_from_change_streams` is only valid for read-write (and partitioned DML) transactions. */
export function checkExclusion(opts: TxnOptionsJson | undefined): void {
  if (opts?.excludeTxnFromChangeStreams && opts.mode === 'readOnly')
    throw new SpannerError(
      Code.INVALID_ARGUMENT,
      'exclude_txn_from_change_streams can only be set for read-write or partitioned DML transactions',
    );
}

/** The Transaction message for a (new) transaction. */
export function txnMessage(txn: Txn, withId: boolean): Resolved['metadata'] {
  return {
    ...(withId ? { id: Buffer.from(txn.id, 'base64') } : {}),
    ...(txn.readOnly ? { readTimestamp: toTimestamp(txn.snapNs) } : {}),
  };
}

/** Resolves a request's selector. `write` requires a read-write transaction (DML). */
export async function resolve(
  db: EmulatedDatabase,
  sel: SelectorJson | undefined,
  write: boolean,
  tag = '',
): Promise<Resolved> {
  const kind =
    sel?.selector ?? (sel?.singleUse ? 'singleUse' : sel?.begin ? 'begin' : sel?.id ? 'id' : undefined);
  if (kind === 'id') {
    const txn = db.txn(Buffer.from(sel?.id ?? []).toString('base64'));
    if (write && txn.readOnly)
      throw new SpannerError(
        Code.FAILED_PRECONDITION,
        'DML statements cannot be executed in a read-only transaction',
      );
    return { txn, view: { snapNs: txn.snapNs, txn: txn.readOnly ? undefined : txn.id } };
  }
  if (kind === 'begin') {
    const txn = await beginFrom(db, sel?.begin, tag);
    if (write && txn.readOnly)
      throw new SpannerError(
        Code.FAILED_PRECONDITION,
        'DML statements cannot be executed in a read-only transaction',
      );
    return {
      txn,
      view: { snapNs: txn.snapNs, txn: txn.readOnly ? undefined : txn.id },
      metadata: txnMessage(txn, true),
    };
  }
  if (write)
    throw new SpannerError(
      Code.INVALID_ARGUMENT,
      'DML statements require a read-write transaction (begin or id selector)',
    );
  const opts = sel?.singleUse;
  checkExclusion(opts);
  if (opts?.mode && opts.mode !== 'readOnly')
    throw new SpannerError(
      Code.INVALID_ARGUMENT,
      'Single-use read-write transactions are not allowed for reads and queries',
    );
  const ns = await boundNs(db, opts?.readOnly);
  return {
    view: { snapNs: ns },
    metadata: opts?.readOnly?.returnReadTimestamp ? { readTimestamp: toTimestamp(ns) } : undefined,
  };
}
