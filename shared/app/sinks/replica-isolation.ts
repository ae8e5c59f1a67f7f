/**
 * Finding the records of a replica batch that cannot be written, record by record (ADR-1502): which records
 * made a change, a record rejected with its named column, the records whose changes cannot be planned, and
 * the `fail` policy's first rejected record. The write itself is in `replica-table.ts`.
 */
import {
  BadRecordError,
  type BadRecordPolicy,
  failedColumn,
  isRecordFailure,
  type RejectedRecord,
} from '../../domain/bad-records';
import type { DataChangeRecord, JsonValue } from '../../domain/change-record';
import { SluiceError } from '../../domain/errors';
import { buildReplicaChanges, type ReplicaChange, type ReplicaOptions } from '../../domain/replica-rows';

/** Canonical text of a key (property order does not matter). */
export function keyText(key: Record<string, JsonValue>): string {
  return JSON.stringify(
    Object.keys(key)
      .sort()
      .map((k) => [k, key[k]]),
  );
}

/** The records that made a change: same commit timestamp, a mod on the same key. */
export function recordsOf(
  change: Pick<ReplicaChange, 'commitTimestamp' | 'key'>,
  records: DataChangeRecord[],
) {
  const key = keyText(change.key);
  return records.filter(
    (r) => r.commitTimestamp === change.commitTimestamp && r.mods.some((m) => keyText(m.keys) === key),
  );
}

/** A record rejected for `err`, with the column it names. */
export function reject(record: DataChangeRecord, err: unknown): RejectedRecord {
  const column = failedColumn(err, record.tableName);
  return { record, error: SluiceError.from(err), ...(column ? { column } : {}) };
}

/** Tries to plan `records`; the error when they cannot be (a record failure), undefined when they can. */
export function planError(records: DataChangeRecord[], options: ReplicaOptions): unknown {
  try {
    buildReplicaChanges(records, options);
    return undefined;
  } catch (err) {
    if (!isRecordFailure(err)) throw err;
    return err;
  }
}

/**
 * Finds the records that cannot be planned: records of different commit timestamps never share a change, so
 * each timestamp's records are tried apart, then each record alone; when a timestamp's records fail only
 * together (concurrent transactions on one key), all of them are rejected.
 */
export function isolatePlanning(records: DataChangeRecord[], options: ReplicaOptions): RejectedRecord[] {
  const byTimestamp = new Map<bigint, DataChangeRecord[]>();
  for (const r of records)
    byTimestamp.set(r.commitTimestamp, [...(byTimestamp.get(r.commitTimestamp) ?? []), r]);
  const rejected: RejectedRecord[] = [];
  for (const group of byTimestamp.values()) {
    const groupError = planError(group, options);
    if (groupError === undefined) continue;
    const alone = group.flatMap((r) => {
      const err = planError([r], options);
      return err === undefined ? [] : [reject(r, err)];
    });
    const rest = group.filter((r) => !alone.some((a) => a.record === r));
    const restError = rest.length > 0 ? planError(rest, options) : undefined;
    rejected.push(...alone, ...(restError === undefined ? [] : rest.map((r) => reject(r, restError))));
  }
  return rejected;
}

/** Keeps the policy: under `fail` the first rejected record (earliest) fails the window. */
export function enforce(policy: BadRecordPolicy, rejected: RejectedRecord[]): void {
  if (policy !== 'fail' || rejected.length === 0) return;
  const first = [...rejected].sort((a, b) =>
    a.record.commitTimestamp < b.record.commitTimestamp
      ? -1
      : a.record.commitTimestamp > b.record.commitTimestamp
        ? 1
        : 0,
  )[0]!;
  throw new BadRecordError(first);
}
