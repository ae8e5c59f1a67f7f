/**
 * Dead letters of the change stream (ADR-1503, ADR-1512): a change record the replica could not take under
 * `SLUICE_ON_BAD_RECORD=dead-letter`, kept in the ledger bucket under `<pipeline>/dead-letters/stream/<table>/`
 * as the stream gave it, with the error, the partition and its position — enough to find the cause, fix it and
 * replay it. The reader writes one letter per record, named from the partition and the record's identity
 * (commit timestamp, transaction id, record sequence), so writing it again (a window re-read after a crash,
 * whatever its flush split) finds the object already there. Letters of several records (written before) are
 * still read and replayed.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { RejectedRecord } from './bad-records';
import type { DataChangeRecord } from './change-record';
import { type Discard, discardMetadata, discardOf } from './dead-letter-discard';
import { ERROR_KINDS, type ErrorKind, SluiceError } from './errors';
import { ledgerReplacer, parseLedgerJson } from './ledger/codec';
import { formatTimestamp, type Timestamp } from './timestamp';
import { timestampString } from './zod-helpers';

/** Version of the dead-letter format. */
export const DEAD_LETTER_FORMAT = 1;

/** Replays kept in a dead letter (the latest ones). */
const MAX_REPLAYS_KEPT = 10;

/**
 * `pending` until a replay applied every record (`replayed`), or until an operator set it aside for good
 * (`discarded`: superseded by later changes, the row is right; kept, never replayed, ADR-2202).
 */
export type DeadLetterState = 'pending' | 'replayed' | 'discarded';

/** One record and why it was set aside. */
export interface DeadRecord {
  record: DataChangeRecord;
  error: { kind: ErrorKind; message: string; column?: string };
}

/** One replay attempt. */
export interface ReplayAttempt {
  at: Timestamp;
  ok: boolean;
  message?: string;
}

/** A dead letter. */
export interface DeadLetter {
  format: typeof DEAD_LETTER_FORMAT;
  kind: 'sluice.stream.dead-letter';
  /** The object's name below the stream dead-letter prefix, without `.json`: `<table>/<time>-<hash>`. */
  id: string;
  pipeline: string;
  /** Source table. */
  table: string;
  partition: { id: string; epoch: number };
  /** The partition's position when the records were set aside: they are after it. */
  position: Timestamp;
  createdAt: Timestamp;
  /** Short label of why (`<kind>:<error name>`), for counting. */
  reason: string;
  records: DeadRecord[];
  state: DeadLetterState;
  replayedAt: Timestamp | null;
  replays: ReplayAttempt[];
  /** HMAC of the content by the reader (ADR-2305); absent in letters written before seals. */
  seal?: string;
  /** Present once discarded. */
  discarded?: Discard;
}

/** Prefix of every stream dead letter of a pipeline (the writer's dead letters live under `…/writer/`). */
export function deadLetterPrefix(pipeline: string): string {
  return `${pipeline}/dead-letters/stream/`;
}

/** The object name of a dead letter. */
export function deadLetterObject(pipeline: string, id: string): string {
  return `${deadLetterPrefix(pipeline)}${id}.json`;
}

/** The id of a dead letter's object, or undefined when the name is not one. */
export function deadLetterIdOf(pipeline: string, name: string): string | undefined {
  const prefix = deadLetterPrefix(pipeline);
  if (!name.startsWith(prefix) || !name.endsWith('.json')) return undefined;
  const id = name.slice(prefix.length, -'.json'.length);
  return DEAD_LETTER_ID.test(id) ? id : undefined;
}

/** `<table>/<commit time, digits>-<16 hex>`; a named schema's table is `sch.T` (ADR-1405). */
const DEAD_LETTER_ID =
  /^(?:[A-Za-z_][A-Za-z0-9_]{0,127}\.)?[A-Za-z_][A-Za-z0-9_]{0,127}\/\d{8}T\d{6}\d{9}Z-[0-9a-f]{16}$/;

/** True for a well-formed dead-letter id (what a replay request may name). */
export function isDeadLetterId(id: string): boolean {
  return DEAD_LETTER_ID.test(id);
}

function compactTime(t: Timestamp): string {
  // 2026-01-01T00:00:00.123456789Z → 20260101T000000123456789Z: sorts by time, no separators in names.
  return formatTimestamp(t).replace(/[-:.]/g, '');
}

/** The id of the dead letter of `records` (one table's, in canonical order) of a partition. */
export function deadLetterId(partitionId: string, records: readonly DataChangeRecord[]): string {
  const first = records[0];
  if (!first) throw new SluiceError('bug', 'a dead letter needs at least one record');
  const hash = createHash('sha256').update(partitionId);
  for (const r of records)
    hash.update(`\u0000${r.commitTimestamp}\u0000${r.serverTransactionId}\u0000${r.recordSequence}`);
  return `${first.tableName}/${compactTime(first.commitTimestamp)}-${hash.digest('hex').slice(0, 16)}`;
}

/** The dead letter of one table's rejected records of one flush. */
export function newDeadLetter(args: {
  pipeline: string;
  partition: { id: string; epoch: number };
  position: Timestamp;
  now: Timestamp;
  rejected: readonly RejectedRecord[];
  reason: string;
}): DeadLetter {
  const records = args.rejected.map(
    (r): DeadRecord => ({
      record: r.record,
      error: { kind: r.error.kind, message: r.error.message, ...(r.column ? { column: r.column } : {}) },
    }),
  );
  return {
    format: DEAD_LETTER_FORMAT,
    kind: 'sluice.stream.dead-letter',
    id: deadLetterId(
      args.partition.id,
      records.map((r) => r.record),
    ),
    pipeline: args.pipeline,
    table: records[0]!.record.tableName,
    partition: args.partition,
    position: args.position,
    createdAt: args.now,
    reason: args.reason,
    records,
    state: 'pending',
    replayedAt: null,
    replays: [],
  };
}

/** The dead letter after a replay attempt (applied: `replayed`). */
export function withReplay(letter: DeadLetter, attempt: ReplayAttempt): DeadLetter {
  const replays = [...letter.replays, attempt].slice(-MAX_REPLAYS_KEPT);
  return attempt.ok
    ? { ...letter, state: 'replayed', replayedAt: attempt.at, replays }
    : { ...letter, replays };
}

/** The dead letter discarded by `discard` (a replayed one is never: the caller refuses it first). */
export function withDiscard(letter: DeadLetter, discard: Discard): DeadLetter {
  if (letter.state === 'replayed')
    throw new SluiceError('bug', `dead letter ${letter.id} was replayed: it cannot be discarded`);
  return { ...letter, state: 'discarded', discarded: discard };
}

const json = z.json();

const spannerType: z.ZodType<DataChangeRecord['columnTypes'][number]['type']> = z.lazy(() =>
  z.object({
    code: z.string(),
    arrayElementType: spannerType.optional(),
    typeAnnotation: z.string().optional(),
    protoTypeFqn: z.string().optional(),
  }),
);

const recordSchema = z.strictObject({
  kind: z.literal('data-change'),
  commitTimestamp: timestampString,
  recordSequence: z.string().regex(/^\d+$/),
  serverTransactionId: z.string(),
  isLastRecordInTransactionInPartition: z.boolean(),
  tableName: z.string().min(1),
  columnTypes: z.array(
    z.strictObject({
      name: z.string(),
      type: spannerType,
      isPrimaryKey: z.boolean(),
      ordinalPosition: z.number().int(),
    }),
  ),
  mods: z.array(
    z.strictObject({
      keys: z.record(z.string(), json),
      newValues: z.record(z.string(), json),
      oldValues: z.record(z.string(), json),
    }),
  ),
  modType: z.enum(['INSERT', 'UPDATE', 'DELETE']),
  valueCaptureType: z.enum(['OLD_AND_NEW_VALUES', 'NEW_ROW', 'NEW_VALUES', 'NEW_ROW_AND_OLD_VALUES']),
  numberOfRecordsInTransaction: z.number().int(),
  numberOfPartitionsInTransaction: z.number().int(),
  transactionTag: z.string(),
  isSystemTransaction: z.boolean(),
});

const schema = z.strictObject({
  format: z.literal(DEAD_LETTER_FORMAT),
  kind: z.literal('sluice.stream.dead-letter'),
  id: z.string().regex(DEAD_LETTER_ID, 'must be a dead-letter id'),
  pipeline: z.string().min(1),
  table: z.string().min(1),
  partition: z.strictObject({ id: z.string().regex(/^[0-9a-f]{32}$/), epoch: z.number().int().min(0) }),
  position: timestampString,
  createdAt: timestampString,
  reason: z.string(),
  records: z
    .array(
      z.strictObject({
        record: recordSchema,
        error: z.strictObject({
          kind: z.enum(ERROR_KINDS),
          message: z.string(),
          column: z.string().optional(),
        }),
      }),
    )
    .min(1),
  state: z.enum(['pending', 'replayed', 'discarded']),
  replayedAt: timestampString.nullable(),
  replays: z.array(z.strictObject({ at: timestampString, ok: z.boolean(), message: z.string().optional() })),
  seal: z.string().max(200).optional(),
  discarded: z
    .strictObject({ by: z.string().min(1), at: timestampString, reason: z.string().optional() })
    .optional(),
});

/** Serialises a dead letter (timestamps as RFC 3339 with nine fractional digits). */
export function serializeDeadLetter(letter: DeadLetter): Buffer {
  return Buffer.from(`${JSON.stringify(letter, ledgerReplacer, 2)}\n`);
}

/** Parses a dead letter. @throws SluiceError (`permanent`) naming every problem. */
export function parseDeadLetter(text: string, what = 'dead letter'): DeadLetter {
  return parseLedgerJson(text, schema, what) as DeadLetter;
}

/** Custom metadata of a dead letter's object: what a listing needs to count and page without reading. */
export function deadLetterMetadata(letter: DeadLetter): Record<string, string> {
  return {
    'sluice-table': letter.table,
    'sluice-state': letter.state,
    'sluice-reason': letter.reason.slice(0, 200),
    'sluice-records': String(letter.records.length),
    'sluice-partition': letter.partition.id,
    ...(letter.discarded ? discardMetadata(letter.discarded) : {}),
  };
}

/** A dead letter as a listing shows it (from metadata only). */
export interface DeadLetterSummary {
  id: string;
  table: string;
  state: DeadLetterState;
  reason: string;
  records: number;
  partition: string;
  updated: string;
  discardedBy?: string;
  discardedAt?: string;
  discardReason?: string;
}

/** Reads a listing's metadata back; undefined when it is not a well-formed dead letter's. */
export function summaryOf(
  id: string,
  metadata: Record<string, string>,
  updated: string,
): DeadLetterSummary | undefined {
  const state = metadata['sluice-state'];
  const records = Number(metadata['sluice-records']);
  if ((state !== 'pending' && state !== 'replayed' && state !== 'discarded') || !Number.isInteger(records))
    return undefined;
  return {
    id,
    table: metadata['sluice-table'] ?? id.split('/')[0]!,
    state,
    reason: metadata['sluice-reason'] ?? '',
    records,
    partition: metadata['sluice-partition'] ?? '',
    updated,
    ...discardOf(metadata),
  };
}
