/**
 * The writer's schema, read once and shared by concurrent requests; read again when a request names a table
 * or column the cached schema lacks, or when Spanner's answer says the schema changed.
 */
import type { WriterCatalog } from '../../domain/writer/catalog';
import type { WriterCatalogSource } from '../../ports/writer-catalog';

/** A cached catalog with explicit refresh. */
export class CatalogCache {
  private current: Promise<WriterCatalog> | undefined;
  private inflight: Promise<WriterCatalog> | undefined;
  private stale = false;

  constructor(private readonly source: WriterCatalogSource) {}

  /** The catalog (read on first use, and after {@link invalidate}). */
  get(): Promise<WriterCatalog> {
    if (!this.current || this.stale) return this.refresh();
    return this.current;
  }

  /** Reads the catalog now; concurrent callers share the read, a failed read is not kept. */
  refresh(): Promise<WriterCatalog> {
    if (this.inflight) return this.inflight;
    this.stale = false;
    const read = this.source.read();
    this.current = read;
    this.inflight = read;
    read.then(
      () => {
        this.inflight = undefined;
      },
      () => {
        this.inflight = undefined;
        if (this.current === read) this.current = undefined;
      },
    );
    return read;
  }

  /** The next {@link get} reads afresh. */
  invalidate(): void {
    this.stale = true;
  }
}
