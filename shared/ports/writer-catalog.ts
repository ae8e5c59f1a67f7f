/**
 * Writer catalog port: the database's tables, columns and index counts, read when the writer starts and again
 * when a write says the schema changed. Implementations: in-memory, and Cloud Spanner (INFORMATION_SCHEMA).
 */
import type { WriterCatalog } from '../domain/writer/catalog';

/** Reads the catalog afresh on every call (the caller caches). */
export interface WriterCatalogSource {
  read(): Promise<WriterCatalog>;
}
