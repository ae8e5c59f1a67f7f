/**
 * PartitionQuery / PartitionRead support: which queries are root-partitionable, the key-range split at the
 * transaction's snapshot, and the server-side handles behind partition tokens.
 */
import { randomBytes } from 'node:crypto';
import type { EmulatedDatabase } from './database';
import { Code, SpannerError, type SpannerTypeJson, type WireValue } from './hooks';
import { catalogOf } from './query';
import type { Table } from './schema';
import type { Resolved, SelectorJson } from './selector';
import { rootPartitionTable } from './sql';
import type { EmulatorState } from './state';
import { qi, type ReadView } from './storage';

/** The table a partitionable query reads, or INVALID_ARGUMENT as the service answers. */
export function partitionSubject(
  db: EmulatedDatabase,
  sql: string,
  params: Record<string, WireValue> = {},
  types: Record<string, SpannerTypeJson> = {},
): string {
  const table = rootPartitionTable(sql, db.dialect, catalogOf(db.ctx), params, types);
  if (!table)
    throw new SpannerError(
      Code.INVALID_ARGUMENT,
      'Query is not root partitionable since it does not have a DistributedUnion at the root. Please check the conditions for a query to be root-partitionable.',
    );
  return table;
}

/** The snapshot and key range of a partition token, checked against the request it came with. */
export function partitionView(
  state: EmulatorState,
  db: EmulatedDatabase,
  token: Buffer,
  subject: string,
  sel?: SelectorJson,
) {
  const p = state.partitions.get(token.toString('hex'));
  if (!p || p.database !== db.name || p.subject !== subject)
    throw new SpannerError(
      Code.INVALID_ARGUMENT,
      'Partition token does not match the request (SQL, table or database differ)',
    );
  if (sel?.id && Buffer.from(sel.id).toString('base64') !== p.txnId)
    throw new SpannerError(Code.INVALID_ARGUMENT, 'Partition token belongs to another transaction');
  return p.view;
}

/** Data per partition when neither the request nor the emulator's options say (a hint, as in the service). */
export const DEFAULT_PARTITION_BYTES = 4 * 1024 * 1024;
/** The service's default (and largest useful) `max_partitions`. */
const MAX_PARTITIONS = 10_000;

/** How many key ranges to cut: the emulator's fixed count, else one per `partitionBytes` of data. */
function partitionCount(
  state: EmulatorState,
  db: EmulatedDatabase,
  table: Table,
  view: ReadView,
  hints: PartitionHints,
): number {
  const max = hints.maxPartitions > 0 ? hints.maxPartitions : MAX_PARTITIONS;
  if (state.options.partitions !== undefined) return Math.max(1, Math.min(state.options.partitions, max));
  const size = table.columns.map((c) => `coalesce(length(${qi(c.name)}), 0)`).join(' + ');
  const { rows, bytes } = db.ctx.db
    .prepare(
      `SELECT count(*) AS rows, coalesce(sum(${size}), 0) AS bytes FROM (${db.storage.viewSql(table, view)})`,
    )
    .get() as { rows: number; bytes: number };
  const target =
    hints.partitionSizeBytes > 0
      ? hints.partitionSizeBytes
      : (state.options.partitionBytes ?? DEFAULT_PARTITION_BYTES);
  return Math.max(1, Math.min(Math.ceil(bytes / target), rows, max));
}

/** The request's `partition_options` (0: not set). */
export interface PartitionHints {
  maxPartitions: number;
  partitionSizeBytes: number;
}

/**
 * Splits `table` at the transaction's snapshot into key ranges — as many as its data calls for, within the
 * request's hints — and hands out tokens.
 */
export function createPartitions(
  state: EmulatorState,
  db: EmulatedDatabase,
  r: Resolved,
  table: string,
  subject: string,
  hints: PartitionHints,
) {
  if (!r.txn?.readOnly)
    throw new SpannerError(
      Code.INVALID_ARGUMENT,
      'Partitioned reads and queries require a read-only transaction started with begin or id',
    );
  const t = db.schema.get(table);
  const n = partitionCount(state, db, t, r.view, hints);
  const keys = n > 1 ? db.storage.keys(t, r.view) : [];
  const bounds = Array.from({ length: n + 1 }, (_, i) =>
    i === 0 || i === n ? undefined : keys[Math.floor((i * keys.length) / n)],
  );
  const partitions = [];
  for (let i = 0; i < n; i++) {
    const token = randomBytes(16);
    const view = { snapNs: r.txn.snapNs, range: { table: t.name, lo: bounds[i], hi: bounds[i + 1] } };
    state.partitions.set(token.toString('hex'), { database: db.name, txnId: r.txn.id, subject, view });
    partitions.push({ partitionToken: token });
  }
  return { partitions, transaction: r.metadata };
}
