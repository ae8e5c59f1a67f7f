/**
 * A snapshot row as the change record a dead letter holds (ADR-2114). A backfill row that a sink cannot take
 * follows the bad-record policy like a stream record, so its letter must read, list and replay like one: the
 * record names the table, the row's key (as its history row's `keys`) and the snapshot timestamp as its
 * commit timestamp, with the backfill's pseudo-transaction (`backfill-<job>`, record sequence 0). It carries
 * no values: under `NEW_VALUES` a replay reads the row at that timestamp from Spanner, as it does for a
 * stream record without the full row (ADR-102), and its replica sequence number is the backfill's (T, 0, 0).
 */
import { createHash } from 'node:crypto';
import type { DataChangeRecord, JsonValue } from '../change-record';
import type { TableSchema } from '../information-schema';
import type { Timestamp } from '../timestamp';

/** The change record standing for the snapshot row of `key` of `schema`, read by backfill `jobId` at `snapshot`. */
export function snapshotRecord(
  schema: TableSchema,
  key: Record<string, JsonValue>,
  snapshot: Timestamp,
  jobId: string,
): DataChangeRecord {
  const keys = new Set(schema.primaryKey);
  return {
    kind: 'data-change',
    commitTimestamp: snapshot,
    recordSequence: '0',
    serverTransactionId: `backfill-${jobId}`,
    isLastRecordInTransactionInPartition: false,
    tableName: schema.name,
    columnTypes: schema.columns
      .filter((c) => !c.hidden)
      .map((c) => ({
        name: c.name,
        type: c.type,
        isPrimaryKey: keys.has(c.name),
        ordinalPosition: c.ordinalPosition,
      })),
    mods: [{ keys: key, newValues: {}, oldValues: {} }],
    modType: 'UPDATE',
    valueCaptureType: 'NEW_VALUES',
    numberOfRecordsInTransaction: 0,
    numberOfPartitionsInTransaction: 0,
    transactionTag: '',
    isSystemTransaction: false,
  };
}

/**
 * The partition a backfill row's dead letter is filed under: 32 hex digits of the job, table and key. Every
 * row of a job shares its pseudo-transaction and record sequence, so the row's key must enter the letter's
 * name; a retried backfill partition (read in any order) finds the letter it wrote.
 */
export function snapshotLetterPartition(jobId: string, table: string, keys: string): string {
  return createHash('sha256')
    .update(`backfill\u0000${jobId}\u0000${table}\u0000${keys}`)
    .digest('hex')
    .slice(0, 32);
}
