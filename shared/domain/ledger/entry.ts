/**
 * The ledger's data model: one entry per change-stream partition, and the result type of every transition.
 * Transitions are pure functions (in sibling modules) from an entry to the next entry; the adapter writes the
 * result with compare-and-swap and re-decides on a lost race.
 */
import { createHash } from 'node:crypto';
import type { ErrorKind } from '../errors';
import { SluiceError } from '../errors';
import type { Timestamp } from '../timestamp';
import type { HistoryCursors } from './history-cursor';

/** Version of the entry format; a reader refuses formats it does not know. */
export const ENTRY_FORMAT = 1;

/**
 * Life of a partition:
 * `waiting` (some parent unfinished) → `ready` → `leased` ⇄ `ready` … → `finished`; `leased` → `failed`.
 */
export type PartitionState = 'waiting' | 'ready' | 'leased' | 'finished' | 'failed';

/** Time-bounded ownership of a partition by one reader invocation. */
export interface Lease {
  /** Unique per reader invocation. */
  holder: string;
  /** The lease may be taken over by another holder at or after this instant. */
  expiresAt: Timestamp;
}

/** The record a failure was met on, when one record caused it: what an operator needs to find it. */
export interface FailedRecord {
  /** Source table. */
  table: string;
  /** Column, when the failure names one. */
  column?: string;
  /** The primary key as the stream gave it, JSON. */
  key: string;
  commitTimestamp: Timestamp;
}

/** The last failure recorded on a partition, for the status page and the operator. */
export interface LastError {
  kind: ErrorKind;
  message: string;
  at: Timestamp;
  /** The record it was met on (bad-record failures, ADR-1502). */
  record?: FailedRecord;
}

/** Running totals, for the status page. */
export interface Counters {
  /** Leases granted (first one = the partition started). */
  leases: number;
  /** Windows completed (lease released after the window). */
  windows: number;
  /** Change records written to the sinks (as reported by the reader). */
  records: number;
  /** Failures recorded. */
  errors: number;
}

/**
 * What the scheduler needs to know about a partition; mirrored into object metadata so a listing carries it
 * (see `metadata.ts`). A {@link PartitionEntry} is a superset, so every function over views accepts entries.
 */
export interface PartitionView {
  /** Hash of the token ({@link partitionId}); also the object name. */
  id: string;
  state: PartitionState;
  /** The pipeline epoch the entry belongs to; entries of another epoch are stale. */
  epoch: number;
  /** First commit timestamp of the partition (inclusive). */
  start: Timestamp;
  /** Every record with commit timestamp ≤ position is durably in every sink. Starts at `start − 1 ns`. */
  position: Timestamp;
  /** Start timestamp of the child-partitions record that ended the partition; set when finished. */
  end: Timestamp | null;
  lease: Lease | null;
  parentIds: string[];
  /** Children, recorded on finish (null before). */
  childIds: string[] | null;
  /**
   * Failed attempts since the position last moved (0: the last attempt succeeded). Mirrored into metadata so
   * the scheduler's status shows every partition that keeps failing, not only failed ones (ADR-1501).
   */
  failures: number;
  /** Writer token of the last write (compare-and-swap protocol: tells a writer whether a 412 was its own). */
  writer: string;
}

/** The full ledger entry of one partition. */
export interface PartitionEntry extends PartitionView {
  format: typeof ENTRY_FORMAT;
  token: string;
  parentTokens: string[];
  childTokens: string[] | null;
  lastError: LastError | null;
  counters: Counters;
  /**
   * Per history table, the write stream and offset of the first history row after the position (ADR-1601);
   * written with the position in one compare-and-swap. Empty until the partition's first history row.
   */
  history: HistoryCursors;
}

/** Why a transition was refused. Every refusal means: re-read, re-decide (usually: nothing to do). */
export type Refusal =
  | 'wrong-state'
  | 'lease-held'
  | 'not-holder'
  | 'parents-unfinished'
  | 'backwards'
  | 'wrong-partition'
  | 'bad-record';

/** Outcome of a transition: the next entry, or a refusal with a reason an operator can read. */
export type Transition =
  | { ok: true; entry: PartitionEntry }
  | { ok: false; refusal: Refusal; message: string };

/** Builds a refusal. */
export function refuse(refusal: Refusal, message: string): Transition {
  return { ok: false, refusal, message };
}

/** The next entry, or a `conflict` {@link SluiceError} carrying the refusal message. */
export function orThrow(t: Transition): PartitionEntry {
  if (t.ok) return t.entry;
  throw new SluiceError('conflict', `${t.refusal}: ${t.message}`);
}

/** Length in hex digits of a partition id (128 bits: collisions are out of reach). */
export const PARTITION_ID_LENGTH = 32;

/** Partition id: SHA-256 of the token, hex, first {@link PARTITION_ID_LENGTH} digits. Tokens are too long for names. */
export function partitionId(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex').slice(0, PARTITION_ID_LENGTH);
}

/** Writer token of entries created from a child-partitions record: constant, so racing creators write identical bytes. */
export const CREATE_WRITER = 'create';

/** Did the last write of this entry come from this writer? (A 412 after a retried write may be our own success.) */
export function isOwnWrite(entry: Pick<PartitionView, 'writer'>, writer: string): boolean {
  return entry.writer === writer;
}
