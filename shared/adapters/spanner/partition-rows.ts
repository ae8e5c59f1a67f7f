/**
 * Reads one partition of a batch transaction's query as raw PartialResultSets (`gapic-stream.ts`) and maps
 * each row from its wire form straight to writer values (ADR-1404): no client value objects, JSON kept as Spanner's exact text, and plain
 * stream back-pressure (no probe chunks). A stream broken mid-partition fails the read; the partition is
 * retried whole, which a backfill does anyway.
 */
import type { Database } from '@google-cloud/spanner';
import type { TableSchema } from '../../domain/information-schema';
import type { ValueIssue } from '../../domain/value-mapping';
import { planWireColumns, type WireColumn, wireRowToWriterRow } from '../../domain/wire-row';
import { KEY_VALUES, type SnapshotRow } from '../../ports/snapshot-source';
import { streamingSql } from './gapic-stream';
import { apiPriority, type Priority } from './request-options';
import { type ResultField, type WireValue, wireRows } from './wire-rows';

type BatchTransaction = ReturnType<Database['batchTransaction']>;

/** What a partition read needs from its handle. */
export interface PartitionQuery {
  sql: string;
  /** The partition token, base64. */
  token: string;
  dataBoost: boolean;
  priority: Priority;
}

/**
 * Streams the partition's rows as writer values; values BigQuery adjusts are reported to `onIssues`. The wire
 * values of `keyColumns` ride along under {@link KEY_VALUES} (a lookup's join keys, exact for every type).
 */
export async function* partitionRows(
  txn: BatchTransaction,
  q: PartitionQuery,
  table: TableSchema,
  onIssues: (issues: ValueIssue[]) => void,
  signal?: AbortSignal,
  keyColumns: readonly string[] = [],
): AsyncIterable<SnapshotRow> {
  const stream = await streamingSql(txn, {
    sql: q.sql,
    partitionToken: Buffer.from(q.token, 'base64'),
    dataBoostEnabled: q.dataBoost,
    requestOptions: { priority: apiPriority(q.priority) },
  });
  const cancel = () => stream.destroy();
  signal?.addEventListener('abort', cancel, { once: true });
  let plan: WireColumn[] = [];
  let keyAt: Array<[string, number]> = [];
  const onFields = (fields: ResultField[]) => {
    const names = fields.map((f) => f.name);
    plan = planWireColumns(names, table);
    keyAt = keyColumns.map((c) => [c, names.indexOf(c)]);
  };
  try {
    for await (const values of wireRows(stream, onFields)) {
      if (signal?.aborted) break;
      const issues: ValueIssue[] = [];
      const row: SnapshotRow = wireRowToWriterRow(values, plan, issues);
      if (keyAt.length > 0) row[KEY_VALUES] = keyValues(values, keyAt);
      if (issues.length > 0) onIssues(issues);
      yield row;
    }
  } finally {
    signal?.removeEventListener('abort', cancel);
    if (!stream.destroyed) stream.destroy();
  }
}

/** The wire values of the key columns (a column the projection lacks is absent, never a guessed NULL). */
function keyValues(values: readonly WireValue[], keyAt: ReadonlyArray<[string, number]>) {
  const out: Record<string, WireValue> = {};
  for (const [name, i] of keyAt) if (i >= 0) out[name] = values[i] ?? null;
  return out;
}
