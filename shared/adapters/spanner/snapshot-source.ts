/**
 * `SnapshotSource` on Cloud Spanner batch read-only transactions: open at T, partition one table's
 * projection, and read any partition from any process by rejoining the transaction from its opaque handle
 * (rows read in Spanner's wire form, `partition-rows.ts`).
 */
import type { Database } from '@google-cloud/spanner';
import { snapshotQuerySql } from '../../domain/backfill/query';
import type { Dialect } from '../../domain/change-record';
import { GrpcCode, SluiceError } from '../../domain/errors';
import type { TableSchema } from '../../domain/information-schema';
import { fromSpannerValue, toSecondsAndNanos } from '../../domain/timestamp';
import type { ValueIssue } from '../../domain/value-mapping';
import type { PartitionRequest, Snapshot, SnapshotRow, SnapshotSource } from '../../ports/snapshot-source';
import { partitionRows } from './partition-rows';
import { apiPriority, preciseDateOf } from './request-options';

interface TransactionHandle {
  session: string;
  transaction: string;
}

interface PartitionHandle {
  sql: string;
  token: string;
  columns: string[];
  dataBoost: boolean;
  priority: PartitionRequest['priority'];
}

/** A snapshot older than the database's version retention: permanent, with the remedy in the message. */
function mapTooOld(err: unknown): unknown {
  const e = err as { code?: unknown; message?: unknown };
  if (
    e?.code === GrpcCode.FAILED_PRECONDITION &&
    /version_retention_period|earliest version/i.test(String(e.message))
  ) {
    return new SluiceError(
      'permanent',
      'snapshot too old: its read timestamp is older than the database keeps versions; restart the backfill ' +
        "with a newer snapshot, or raise it with ALTER DATABASE … SET OPTIONS (version_retention_period = '7d')",
      { cause: err },
    );
  }
  return err;
}

/** Options of {@link SpannerSnapshotSource}. */
export interface SpannerSnapshotOptions {
  /** The database's dialect, or how to read it when first needed: decides identifier quoting. */
  dialect?: Dialect | (() => Promise<Dialect>);
  onValueIssues?: (table: string, issues: ValueIssue[]) => void;
}

/** Batch snapshots of one database. */
export class SpannerSnapshotSource implements SnapshotSource {
  constructor(
    private readonly database: Database,
    private readonly options: SpannerSnapshotOptions = {},
  ) {}

  async open(readTimestamp?: Parameters<SnapshotSource['open']>[0]): Promise<Snapshot> {
    const bounds =
      readTimestamp === undefined ? { strong: true } : { readTimestamp: preciseDateOf(readTimestamp) };
    const [txn] = await this.database.createBatchTransaction(bounds).catch((e: unknown) => {
      throw mapTooOld(e);
    });
    const id = txn.identifier();
    const ts = txn.readTimestamp ? fromSpannerValue(txn.readTimestamp) : readTimestamp;
    if (ts === undefined) throw new Error('batch transaction has no read timestamp');
    const handle: TransactionHandle = { session: String(id.session), transaction: String(id.transaction) };
    return { transaction: JSON.stringify(handle), readTimestamp: ts };
  }

  async partition(snapshot: Snapshot, request: PartitionRequest): Promise<string[]> {
    const option = this.options.dialect ?? 'GOOGLE_STANDARD_SQL';
    const dialect = typeof option === 'function' ? await option() : option;
    const sql = snapshotQuerySql(dialect, request.table.name, request.columns);
    const txn = this.rejoin(snapshot);
    const [partitions] = await txn
      .createQueryPartitions({
        sql,
        params: {},
        dataBoostEnabled: request.dataBoost,
        requestOptions: { priority: apiPriority(request.priority) },
        ...(request.maxPartitions ? { partitionOptions: { maxPartitions: request.maxPartitions } } : {}),
      })
      .catch((e: unknown) => {
        throw mapTooOld(e);
      });
    return partitions.map((p) => {
      const token = Buffer.from((p as { partitionToken: Uint8Array | string }).partitionToken as Uint8Array);
      const handle: PartitionHandle = {
        sql,
        token: token.toString('base64'),
        columns: request.columns,
        dataBoost: request.dataBoost,
        priority: request.priority,
      };
      return JSON.stringify(handle);
    });
  }

  async *read(
    snapshot: Snapshot,
    partition: string,
    table: TableSchema,
    signal?: AbortSignal,
    keyColumns: readonly string[] = [],
  ): AsyncIterable<SnapshotRow> {
    const p = JSON.parse(partition) as PartitionHandle;
    const onIssues = (issues: ValueIssue[]) => this.options.onValueIssues?.(table.name, issues);
    try {
      yield* partitionRows(this.rejoin(snapshot), p, table, onIssues, signal, keyColumns);
    } catch (e) {
      throw mapTooOld(e);
    }
  }

  async close(snapshot: Snapshot): Promise<void> {
    this.rejoin(snapshot).close();
  }

  private rejoin(snapshot: Snapshot) {
    const h = JSON.parse(snapshot.transaction) as TransactionHandle;
    const { seconds, nanos } = toSecondsAndNanos(snapshot.readTimestamp);
    return this.database.batchTransaction({
      session: h.session,
      transaction: h.transaction,
      timestamp: { seconds: String(seconds), nanos },
    });
  }
}
