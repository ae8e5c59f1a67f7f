import { RowsRejectedError } from '../../../shared/domain/bad-records';
/** Minimal in-memory sinks and catalog for the application tests (BigQuery CDC semantics: highest sequence wins). */

import { type MemoryHistoryOptions, MemoryHistorySink } from '../../../shared/adapters/memory/history-sink';
import type { JsonValue } from '../../../shared/domain/change-record';
import type { HistoryRow } from '../../../shared/domain/history-rows';
import type {
  ChangeStreamOptions,
  ChangeStreamScope,
  TableSchema,
} from '../../../shared/domain/information-schema';
import { TableNotFoundError } from '../../../shared/domain/information-schema';
import type { ReplicaDelete, ReplicaUpsert } from '../../../shared/domain/replica-rows';
import type { KeyColumn } from '../../../shared/domain/row-reads';
import type { Timestamp } from '../../../shared/domain/timestamp';
import type { WriterValue } from '../../../shared/domain/value-mapping';
import type { CompletenessSink, ReplicaSink } from '../../../shared/ports/sinks';
import type { RowsAt, SpannerCatalog } from '../../../shared/ports/spanner-catalog';
import { ALL_TABLES_STREAM_OPTIONS } from './catalog';
import { COLUMNS, type ScriptedStream } from './script';

/** Fails the next `n` calls with an error carrying gRPC `code`. */
export class FaultSwitch {
  n = 0;
  code = 14;
  hang = false;
  /** Requests to let through before the failures start. */
  skip = 0;
  fail(n: number, code = 14, after = 0) {
    this.n = n;
    this.code = code;
    this.skip = after;
  }
  async check(): Promise<void> {
    if (this.hang) await new Promise<never>(() => undefined);
    if (this.n > 0 && this.skip > 0) this.skip--;
    else if (this.n > 0) {
      this.n--;
      throw Object.assign(new Error('injected sink failure'), { code: this.code });
    }
  }
}

export class MemoryReplica implements ReplicaSink {
  readonly tables = new Map<string, Map<string, { seq: string; row: Record<string, WriterValue> | null }>>();
  readonly ensured: string[] = [];
  readonly faults = new FaultSwitch();
  writes = 0;
  /** Keys (`{"Id":"3"}`) whose rows are rejected for their content, as BigQuery row errors do. */
  readonly rejectKeys = new Set<string>();
  async ensureTable(destination: string): Promise<void> {
    this.ensured.push(destination);
  }
  async write(destination: string, changes: Array<ReplicaUpsert | ReplicaDelete>): Promise<void> {
    await this.faults.check();
    const rejected = changes
      .map((c, index) => ({ index, message: `row ${JSON.stringify(c.key)}: value too long for its column` }))
      .filter((r) => this.rejectKeys.has(JSON.stringify(changes[r.index]!.key)));
    if (rejected.length > 0) throw new RowsRejectedError('rows rejected', rejected);
    this.writes++;
    const t = this.tables.get(destination) ?? new Map();
    this.tables.set(destination, t);
    for (const c of changes) {
      const key = JSON.stringify(c.key);
      const cur = t.get(key);
      if (cur && cur.seq >= c.sequence) continue;
      t.set(key, { seq: c.sequence, row: c.kind === 'upsert' ? c.row : null });
    }
  }
  /** Live rows of a destination, sorted by Id. */
  rows(destination: string): Array<Record<string, WriterValue>> {
    return [...(this.tables.get(destination)?.values() ?? [])]
      .flatMap((e) => (e.row ? [e.row] : []))
      .sort((a, b) => Number(a.Id) - Number(b.Id));
  }
}

/**
 * The in-memory history sink (offsets, streams, finalize) with a switch that fails requests before they are
 * applied, small requests (so a flush is several requests and can fail part way) and the tables it was asked
 * to create.
 */
export class MemoryHistory extends MemoryHistorySink {
  readonly ensured: string[] = [];
  readonly faults = new FaultSwitch();
  constructor(options: MemoryHistoryOptions = {}) {
    super({ rowsPerRequest: 3, ...options });
  }
  override async ensureTable(...args: Parameters<MemoryHistorySink['ensureTable']>): Promise<void> {
    this.ensured.push(args[0]);
    await super.ensureTable(...args);
  }
  private readonly gates: Array<Promise<void>> = [];
  /**
   * The next append waits until the returned function is called: a reader that stalls in BigQuery (its
   * lease may expire meanwhile) and then carries on.
   */
  pauseNextAppend(): { resume(): void; taken(): boolean } {
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    this.gates.push(gate);
    return {
      resume: () => {
        const i = this.gates.indexOf(gate);
        if (i >= 0) this.gates.splice(i, 1);
        open();
      },
      taken: () => !this.gates.includes(gate),
    };
  }
  override async appendAt(destination: string, stream: string, offset: number, rows: HistoryRow[]) {
    await this.faults.check();
    const gate = this.gates.shift();
    if (gate) await gate;
    return super.appendAt(destination, stream, offset, rows);
  }
  /** Every row of the raw table. */
  rows(destination: string): HistoryRow[] {
    return this.rawRows(destination);
  }
  /** Distinct change ids in the raw table. */
  distinct(destination: string): number {
    return new Set(this.rawRows(destination).map((r) => r.change_id)).size;
  }
}

export class MemoryCompleteness implements CompletenessSink {
  readonly latest = new Map<string, Timestamp>();
  async record(
    entries: Array<{ sourceTable: string; destination: string; watermark: Timestamp }>,
  ): Promise<void> {
    for (const e of entries) this.latest.set(`${e.sourceTable}->${e.destination}`, e.watermark);
  }
}

export class ScriptCatalog implements SpannerCatalog {
  scope: ChangeStreamScope | undefined = { all: true, tables: new Map() };
  options: ChangeStreamOptions = { ...ALL_TABLES_STREAM_OPTIONS };
  /** Tables the database does not have. */
  readonly missing = new Set<string>();
  constructor(private readonly script: ScriptedStream) {}
  async dialect() {
    return 'GOOGLE_STANDARD_SQL' as const;
  }
  async streamScope() {
    return this.scope;
  }
  async streamOptions() {
    return this.options;
  }
  /** Tables the schema answers for: the script's tables, plus any a test adds. */
  tables = ['Items', 'Orders'];
  async tableSchema(table: string): Promise<TableSchema> {
    if (this.missing.has(table)) throw new TableNotFoundError(table);
    return {
      name: table,
      primaryKey: ['Id'],
      columns: [
        { name: 'Id', type: { code: 'INT64' }, nullable: false, ordinalPosition: 1 },
        { name: 'Val', type: { code: 'STRING' }, nullable: true, ordinalPosition: 2 },
      ],
    };
  }
  async tableSchemas(): Promise<TableSchema[]> {
    return Promise.all(this.tables.map((t) => this.tableSchema(t)));
  }
  async readRowsAt(
    table: string,
    _keyColumns: readonly KeyColumn[],
    keys: ReadonlyArray<Record<string, JsonValue>>,
    at: Timestamp,
  ): Promise<RowsAt> {
    const rows = keys.flatMap((key) => {
      const id = Number(key.Id);
      const val = this.script.rowAt(table, id, at);
      return val === null ? [] : [{ Id: String(id), Val: val }];
    });
    return { columns: COLUMNS.map((c) => ({ name: c.name, type: c.type })), rows };
  }
}
