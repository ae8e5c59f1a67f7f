/**
 * `SpannerCatalog` on Cloud Spanner: the INFORMATION_SCHEMA queries of `information-schema.ts` (strong
 * single-use reads) and single-row reads at an exact timestamp, converted to Storage Write writer values.
 */
import type { Database } from '@google-cloud/spanner';
import type { Dialect, JsonValue } from '../../domain/change-record';
import type { SpannerQuery } from '../../domain/change-stream-query';
import { clientRowToWriterRow } from '../../domain/client-row';
import {
  type ChangeStreamOptions,
  type ChangeStreamScope,
  changeStreamColumnsQuery,
  changeStreamOptionsQuery,
  changeStreamQueryOf,
  changeStreamTablesQuery,
  DATABASE_DIALECT_QUERY,
  parseChangeStreamOptions,
  parseChangeStreamScope,
  parseDatabaseDialect,
  parseTableSchema,
  primaryKeyQuery,
  type TableSchema,
  tableColumnsQuery,
} from '../../domain/information-schema';
import type { Timestamp } from '../../domain/timestamp';
import type { ValueIssue, WriterValue } from '../../domain/value-mapping';
import type { SpannerCatalog } from '../../ports/spanner-catalog';
import { preciseDateOf } from './request-options';

/** Options of {@link SpannerCatalogReader}. */
export interface SpannerCatalogOptions {
  /** Called with the values a read row could not carry exactly (see `toWriterValue`). */
  onValueIssues?: (table: string, issues: ValueIssue[]) => void;
}

/** Reads the catalog and rows of one database. The dialect and table schemas are cached once read. */
export class SpannerCatalogReader implements SpannerCatalog {
  private dialectRead: Promise<Dialect> | undefined;
  private readonly schemas = new Map<string, Promise<TableSchema>>();

  constructor(
    private readonly database: Database,
    private readonly options: SpannerCatalogOptions = {},
  ) {}

  dialect(): Promise<Dialect> {
    this.dialectRead ??= this.query(DATABASE_DIALECT_QUERY)
      .then(parseDatabaseDialect)
      .catch((err: unknown) => this.adminDialect(err));
    this.dialectRead.catch(() => {
      this.dialectRead = undefined;
    });
    return this.dialectRead;
  }

  async streamScope(stream: string): Promise<ChangeStreamScope | undefined> {
    const dialect = await this.dialect();
    const [streams, tables, columns] = await Promise.all([
      this.query(changeStreamQueryOf(dialect, stream)),
      this.query(changeStreamTablesQuery(dialect, stream)),
      this.query(changeStreamColumnsQuery(dialect, stream)),
    ]);
    return parseChangeStreamScope(streams, tables, columns);
  }

  async streamOptions(stream: string): Promise<ChangeStreamOptions> {
    return parseChangeStreamOptions(await this.query(changeStreamOptionsQuery(await this.dialect(), stream)));
  }

  tableSchema(table: string): Promise<TableSchema> {
    let schema = this.schemas.get(table);
    if (!schema) {
      schema = this.readTableSchema(table);
      this.schemas.set(table, schema);
      schema.catch(() => this.schemas.delete(table));
    }
    return schema;
  }

  async readRowAt(
    table: string,
    key: Record<string, JsonValue>,
    columns: string[],
    at: Timestamp,
  ): Promise<Record<string, WriterValue> | null> {
    const schema = await this.tableSchema(table);
    const keyValues = schema.primaryKey.map((name) => {
      if (!(name in key)) throw new Error(`key of ${table} lacks column ${name}`);
      return key[name] as JsonValue;
    });
    const selected = schema.columns.filter(
      (c) => columns.includes(c.name) || schema.primaryKey.includes(c.name),
    );
    // Mod keys are already in Spanner's wire form (INT64 as text, BYTES as base64), which is what a key
    // set carries (the client's typing says string[], its encoder takes any value); the read is single-use
    // at exactly `at`.
    const [rows] = await this.database
      .table(table)
      .read(
        { keys: [keyValues] as unknown as string[][], columns: selected.map((c) => c.name) },
        { readTimestamp: preciseDateOf(at) },
      );
    const [row] = rows;
    if (row === undefined) return null;
    const issues: ValueIssue[] = [];
    const values = clientRowToWriterRow(row, selected, issues);
    if (issues.length > 0) this.options.onValueIssues?.(table, issues);
    return values;
  }

  /**
   * The dialect from the database's metadata (GetDatabase), when the INFORMATION_SCHEMA probe fails: that
   * needs `spanner.databases.get`, which a read-only role may lack, so it is only the fallback.
   */
  private async adminDialect(cause: unknown): Promise<Dialect> {
    const dialect = await this.database.getDatabaseDialect().catch(() => {
      throw cause;
    });
    if (dialect === 'POSTGRESQL' || dialect === 'GOOGLE_STANDARD_SQL') return dialect;
    throw cause;
  }

  private async readTableSchema(table: string): Promise<TableSchema> {
    const dialect = await this.dialect();
    const [columns, keys] = await Promise.all([
      this.query(tableColumnsQuery(dialect, table)),
      this.query(primaryKeyQuery(dialect, table)),
    ]);
    return parseTableSchema(table, dialect, columns, keys);
  }

  private async query(q: SpannerQuery): Promise<unknown[]> {
    const [rows] = await this.database.run(
      { sql: q.sql, params: q.params, types: q.types },
      { strong: true },
    );
    return rows;
  }
}
