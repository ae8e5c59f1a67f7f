/** In-memory `WriterCatalogSource`: returns the catalog it holds (tests change it to simulate DDL). */
import type { WriterCatalog } from '../../domain/writer/catalog';
import type { WriterCatalogSource } from '../../ports/writer-catalog';

/** A catalog source over a value. */
export class MemoryWriterCatalog implements WriterCatalogSource {
  /** Calls of {@link read} so far. */
  reads = 0;

  constructor(public catalog: WriterCatalog) {}

  async read(): Promise<WriterCatalog> {
    this.reads++;
    return structuredClone(this.catalog);
  }
}
