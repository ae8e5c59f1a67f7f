/**
 * The last schema the core showed the engine. INFORMATION_SCHEMA rows and the emulated DDL text depend on the
 * database's dialect and tables, which the engine only learns when the core calls one of its hooks.
 */
import type { SchemaView } from '../hooks';

/** Remembers the dialect and the schema of the latest hook call. */
export class SchemaTracker {
  /** The dialect of the last schema seen, or the configured one before any. */
  dialect: SchemaView['dialect'];
  /** The last schema seen, if any. */
  last: SchemaView | undefined;

  constructor(dialect: SchemaView['dialect']) {
    this.dialect = dialect;
  }

  /** Records the schema passed to a hook. */
  seen(schema: SchemaView): void {
    this.last = schema;
    this.dialect = schema.dialect;
  }
}
