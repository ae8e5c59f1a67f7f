/**
 * `SpannerCatalog` on Cloud Spanner: the INFORMATION_SCHEMA queries of `information-schema.ts` (strong
 * single-use reads, or as of a timestamp for the schema a record was committed under) and keyed reads of
 * whole rows at an exact timestamp, converted to the form change-stream mods carry.
 */
import type { Database } from '@google-cloud/spanner';
import type { Dialect, JsonValue } from '../../domain/change-record';
import type { SpannerQuery } from '../../domain/change-stream-query';
import { classifyError } from '../../domain/errors';
import {
  allColumnsQuery,
  allPrimaryKeysQuery,
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
  parseTableSchemas,
  primaryKeyQuery,
  type TableSchema,
  tableColumnsQuery,
} from '../../domain/information-schema';
import { KEYS_PER_READ, type KeyColumn, keyedRowsQuery } from '../../domain/row-reads';
import { parseTypeJson } from '../../domain/spanner-types';
import type { Timestamp } from '../../domain/timestamp';
import type { RowsAt, SchemaReadOptions, SpannerCatalog } from '../../ports/spanner-catalog';
import { wireQuery } from './gapic-stream';
import { preciseDateOf } from './request-options';

/**
 * Reads the catalog and rows of one database. The dialect and table schemas are cached once read; a fresh
 * read (after drift) replaces a cached schema, and a read as of a timestamp is never cached.
 */
export class SpannerCatalogReader implements SpannerCatalog {
  private dialectRead: Promise<Dialect> | undefined;
  private readonly schemas = new Map<string, Promise<TableSchema>>();

  constructor(private readonly database: Database) {}

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

  tableSchema(table: string, options: SchemaReadOptions = {}): Promise<TableSchema> {
    if (options.at !== undefined || options.fresh) {
      const read = this.readTableSchema(table, options.at);
      // A fresh read replaces the cached one (drift was detected: later readers want the new schema).
      if (options.at === undefined) this.cache(table, read);
      return read;
    }
    let schema = this.schemas.get(table);
    if (!schema) schema = this.cache(table, this.readTableSchema(table));
    return schema;
  }

  async tableSchemas(options: SchemaReadOptions = {}): Promise<TableSchema[]> {
    const dialect = await this.dialect();
    const [columns, keys] = await Promise.all([
      this.queryAt(allColumnsQuery(dialect), options.at),
      this.queryAt(allPrimaryKeysQuery(dialect), options.at),
    ]);
    const schemas = parseTableSchemas(dialect, columns, keys);
    if (options.at === undefined) for (const s of schemas) this.cache(s.name, Promise.resolve(s));
    return schemas;
  }

  async readRowsAt(
    table: string,
    keyColumns: readonly KeyColumn[],
    keys: ReadonlyArray<Record<string, JsonValue>>,
    at: Timestamp,
  ): Promise<RowsAt> {
    const dialect = await this.dialect();
    const out: RowsAt = { columns: [], rows: [] };
    for (let i = 0; i < keys.length; i += KEYS_PER_READ) {
      const q = keyedRowsQuery(dialect, table, keyColumns, keys.slice(i, i + KEYS_PER_READ));
      // One single-use request in wire form, which is the form mods carry: no client value objects between.
      const { fields, rows } = await wireQuery(this.database, q, at);
      out.columns = fields.map((f, n) => ({
        name: f.name,
        type: parseTypeJson(f.type, `${table} read.rowType.fields[${n}] (column ${table}.${f.name})`),
      }));
      const names = out.columns.map((c) => c.name);
      for (const values of rows) {
        const row: Record<string, JsonValue> = {};
        for (let n = 0; n < names.length; n++) row[names[n] as string] = (values[n] ?? null) as JsonValue;
        out.rows.push(row);
      }
    }
    return out;
  }

  private cache(table: string, read: Promise<TableSchema>): Promise<TableSchema> {
    this.schemas.set(table, read);
    read.catch(() => {
      if (this.schemas.get(table) === read) this.schemas.delete(table);
    });
    return read;
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

  private async readTableSchema(table: string, at?: Timestamp): Promise<TableSchema> {
    const dialect = await this.dialect();
    const [columns, keys] = await Promise.all([
      this.queryAt(tableColumnsQuery(dialect, table), at),
      this.queryAt(primaryKeyQuery(dialect, table), at),
    ]);
    return parseTableSchema(table, dialect, columns, keys);
  }

  /**
   * A query as of `at` (INFORMATION_SCHEMA shows the schema version of that timestamp), or strong. A
   * timestamp beyond the version retention (FAILED_PRECONDITION) — or any other refusal of a stale
   * INFORMATION_SCHEMA read — falls back to the current schema: the caller adds the columns its record
   * carries, so nothing is lost, only the schema of that moment is approximated. Transient errors are thrown.
   */
  private async queryAt(q: SpannerQuery, at?: Timestamp): Promise<unknown[]> {
    if (at === undefined) return this.query(q);
    try {
      const [rows] = await this.database.run(
        { sql: q.sql, params: q.params, types: q.types },
        { readTimestamp: preciseDateOf(at) },
      );
      return rows;
    } catch (err) {
      if (classifyError(err) === 'retryable') throw err;
      return this.query(q);
    }
  }

  private async query(q: SpannerQuery): Promise<unknown[]> {
    const [rows] = await this.database.run(
      { sql: q.sql, params: q.params, types: q.types },
      { strong: true },
    );
    return rows;
  }
}
