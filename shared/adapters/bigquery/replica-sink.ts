/**
 * The replica sink on BigQuery: a table per source table with a primary key (NOT ENFORCED) for CDC, written
 * as UPSERT / DELETE rows with `_CHANGE_SEQUENCE_NUMBER` on the `_default` stream (DESIGN §5).
 */
import type { BigQuery, Table, TableMetadata } from '@google-cloud/bigquery';
import type { managedwriter } from '@google-cloud/bigquery-storage';
import { RowsRejectedError } from '../../domain/bad-records';
import type { BigQueryField } from '../../domain/bigquery-schema';
import type { SluiceError } from '../../domain/errors';
import type { TableSchema } from '../../domain/information-schema';
import { replicaTableMissing } from '../../domain/missing-table';
import type { ReplicaDelete, ReplicaUpsert } from '../../domain/replica-rows';
import { planFields } from '../../domain/type-changes';
import type { EnsureOptions, ReplicaSink } from '../../ports/sinks';
import { AppendRowsError } from './append-errors';
import { type AppendLimits, DEFAULT_APPEND_LIMITS, DefaultStreamWriters } from './default-stream';
import { replicaSchemaOf } from './replicated-columns';
import { CdcRows } from './row-encoder';
import {
  addFieldsGuarded,
  createTable,
  type DatasetRef,
  readFields,
  tablePath,
  widenFields,
} from './table-admin';

/** The official clients a BigQuery sink uses. */
export interface SinkClients {
  bigquery: BigQuery;
  writer: managedwriter.WriterClient;
}

/** Options of {@link BigQueryReplicaSink}. */
export interface ReplicaSinkOptions extends DatasetRef {
  /** `max_staleness` of created tables as a REST interval string, e.g. `0-0 0 0:10:0`. */
  maxStaleness?: string;
  limits?: Partial<AppendLimits>;
}

const CLUSTERABLE = new Set(['STRING', 'INT64', 'NUMERIC', 'BIGNUMERIC', 'BOOL', 'DATE', 'TIMESTAMP']);

/** Clustering on the leading key columns BigQuery can cluster by (at most four), for lookups by key. */
function keyClustering(fields: BigQueryField[], primaryKey: string[]): string[] {
  const out: string[] = [];
  for (const name of primaryKey.slice(0, 4)) {
    const field = fields.find((f) => f.name === name);
    if (!field || field.mode === 'REPEATED' || !CLUSTERABLE.has(field.type)) break;
    out.push(name);
  }
  return out;
}

/** {@link ReplicaSink} on BigQuery CDC. */
export class BigQueryReplicaSink implements ReplicaSink {
  /** Per destination, the schema last ensured by this instance: a repeated call costs nothing. */
  private readonly ensured = new Map<string, string>();
  private readonly writers: DefaultStreamWriters;

  constructor(
    private readonly clients: SinkClients,
    private readonly options: ReplicaSinkOptions,
  ) {
    this.writers = new DefaultStreamWriters(clients.writer, true, {
      ...DEFAULT_APPEND_LIMITS,
      ...options.limits,
    });
  }

  async ensureTable(
    destination: string,
    source: TableSchema,
    watched: 'all' | string[],
    options: EnsureOptions = {},
  ): Promise<void> {
    const schema = replicaSchemaOf(source, watched);
    const signature = JSON.stringify(schema);
    if (!options.fresh && this.ensured.get(destination) === signature) return;
    const table = this.clients.bigquery
      .dataset(this.options.dataset, { projectId: this.options.projectId })
      .table(destination);
    if ((await readFields(table)) === undefined) {
      if (options.existed && !options.fresh) throw this.missing(destination);
      await createTable(this.clients.bigquery, this.options, destination, this.metadata(schema));
    }
    await this.evolve(table, destination, source, schema.fields);
    // The next append reconnects with the table's schema — also when another instance added the columns
    // (a connection opened before lacks them) — and every column of it is expected: one the Storage Write
    // API does not serve yet is waited for, not lost.
    const expected = schema.fields.map((f) => f.name);
    await this.writers.invalidate(tablePath(this.options, destination), expected);
    this.ensured.set(destination, signature);
  }

  /**
   * Adds (and widens) the columns the table lacks, each patch guarded by the table's etag: one that lost a
   * race with another instance's change is planned again from a fresh read (ADR-2122).
   */
  private async evolve(table: Table, destination: string, source: TableSchema, wanted: BigQueryField[]) {
    const types = new Map(source.columns.map((c) => [c.name, c.type]));
    await addFieldsGuarded(table, async (existing) => {
      const plan = planFields(existing, wanted, destination, source.name, types);
      if (plan.widen.length === 0) return plan.add;
      await widenFields(this.clients.bigquery, this.options, destination, plan.widen);
      return 'again';
    });
  }

  /**
   * Writes the rows. @throws RowsRejectedError when BigQuery rejected rows for their content (nothing of that
   * request was written; the indexes are into `changes`), so the reader can name the records (ADR-1502).
   * Rows rejected on a connection opened before the table's schema changed (a column relaxed by an operator)
   * are sent once more on a fresh connection, which carries the current schema: only rows the current schema
   * refuses are bad records.
   */
  async write(destination: string, changes: Array<ReplicaUpsert | ReplicaDelete>): Promise<void> {
    const path = tablePath(this.options, destination);
    // The CDC pseudo-columns are written by the encoder beside each row, not copied into it.
    const rows = new CdcRows(changes);
    try {
      await this.writers.append(path, rows);
    } catch (err) {
      if (isNotFound(err)) throw this.missing(destination, err);
      if (!(err instanceof AppendRowsError && err.rowErrors.length > 0)) throw err;
      // The failed append closed its connection: this one opens with the table's current schema.
      try {
        await this.writers.append(path, rows);
      } catch (again) {
        if (again instanceof AppendRowsError && again.rowErrors.length > 0)
          throw new RowsRejectedError(again.message, again.rowErrors);
        throw again;
      }
    }
  }

  /**
   * The table is gone (deleted while the pipeline ran): a permanent error naming it and the repair, and it
   * is no longer taken as ensured. Recreating it here would silently leave out every row replicated before.
   */
  private missing(destination: string, cause?: unknown): SluiceError {
    this.ensured.delete(destination);
    return replicaTableMissing(`${this.options.dataset}.${destination}`, cause);
  }

  /** Closes the Storage Write connections (the clients stay open: they belong to the caller). */
  close(): void {
    this.writers.close();
  }

  private metadata(schema: { fields: BigQueryField[]; primaryKey: string[] }): TableMetadata {
    const clustering = keyClustering(schema.fields, schema.primaryKey);
    return {
      schema: { fields: schema.fields },
      tableConstraints: { primaryKey: { columns: schema.primaryKey } },
      ...(clustering.length > 0 ? { clustering: { fields: clustering } } : {}),
      ...(this.options.maxStaleness ? { maxStaleness: this.options.maxStaleness } : {}),
    };
  }
}

/** gRPC NOT_FOUND: the table (or its default stream) does not exist. */
function isNotFound(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 5;
}
