/**
 * `WriterCatalogSource` on Cloud Spanner: the dialect (as the pipeline's catalog reader learns it), then three
 * strong single-use INFORMATION_SCHEMA queries (tables, columns, index columns). Needs only
 * `spanner.databases.select`, which the writer's database-user role includes.
 */
import type { Database } from '@google-cloud/spanner';
import type { SpannerQuery } from '../../domain/change-stream-query';
import {
  parseWriterCatalog,
  type WriterCatalog,
  writerColumnsQuery,
  writerIndexColumnsQuery,
  writerTablesQuery,
} from '../../domain/writer/catalog';
import type { WriterCatalogSource } from '../../ports/writer-catalog';
import { SpannerCatalogReader } from './catalog';

/** Reads the writer's catalog of one database. */
export class SpannerWriterCatalog implements WriterCatalogSource {
  private readonly catalog: SpannerCatalogReader;

  constructor(private readonly database: Database) {
    this.catalog = new SpannerCatalogReader(database);
  }

  async read(): Promise<WriterCatalog> {
    const dialect = await this.catalog.dialect();
    const [tables, columns, indexes] = await Promise.all([
      this.query(writerTablesQuery(dialect)),
      this.query(writerColumnsQuery(dialect)),
      this.query(writerIndexColumnsQuery(dialect)),
    ]);
    return parseWriterCatalog(dialect, tables, columns, indexes);
  }

  private async query(q: SpannerQuery): Promise<unknown[]> {
    const [rows] = await this.database.run(
      { sql: q.sql, params: q.params, types: q.types, json: true },
      { strong: true },
    );
    return rows;
  }
}
