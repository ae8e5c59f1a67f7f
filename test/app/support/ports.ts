/** Minimal in-memory sinks and catalog for the application tests (BigQuery CDC semantics: highest sequence wins). */
import type { JsonValue } from '../../../shared/domain/change-record';
import type { HistoryRow } from '../../../shared/domain/history-rows';
import type {
  ChangeStreamOptions,
  ChangeStreamScope,
  TableSchema,
} from '../../../shared/domain/information-schema';
import type { ReplicaDelete, ReplicaUpsert } from '../../../shared/domain/replica-rows';
import type { Timestamp } from '../../../shared/domain/timestamp';
import type { WriterValue } from '../../../shared/domain/value-mapping';
import type { CompletenessSink, HistorySink, ReplicaSink } from '../../../shared/ports/sinks';
import type { SpannerCatalog } from '../../../shared/ports/spanner-catalog';
import type { ScriptedStream } from './script';

/** Fails the next `n` calls with an error carrying gRPC `code`. */
export class FaultSwitch {
  n = 0;
  code = 14;
  hang = false;
  fail(n: number, code = 14) {
    this.n = n;
    this.code = code;
  }
  async check(): Promise<void> {
    if (this.hang) await new Promise<never>(() => undefined);
    if (this.n > 0) {
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
  async ensureTable(destination: string): Promise<void> {
    this.ensured.push(destination);
  }
  async write(destination: string, changes: Array<ReplicaUpsert | ReplicaDelete>): Promise<void> {
    await this.faults.check();
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

export class MemoryHistory implements HistorySink {
  readonly rows = new Map<string, HistoryRow[]>();
  readonly ensured: string[] = [];
  readonly faults = new FaultSwitch();
  async ensureTable(destination: string): Promise<void> {
    this.ensured.push(destination);
  }
  async append(destination: string, rows: HistoryRow[]): Promise<void> {
    await this.faults.check();
    this.rows.set(destination, [...(this.rows.get(destination) ?? []), ...rows]);
  }
  /** Distinct change ids (what the dedup view shows). */
  distinct(destination: string): number {
    return new Set((this.rows.get(destination) ?? []).map((r) => r.change_id)).size;
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
  options: ChangeStreamOptions = {
    valueCaptureType: 'NEW_ROW',
    retentionSeconds: 86_400,
    partitionMode: 'IMMUTABLE_KEY_RANGE',
    raw: {},
  };
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
  async tableSchema(table: string): Promise<TableSchema> {
    return {
      name: table,
      primaryKey: ['Id'],
      columns: [
        { name: 'Id', type: { code: 'INT64' }, nullable: false, ordinalPosition: 1 },
        { name: 'Val', type: { code: 'STRING' }, nullable: true, ordinalPosition: 2 },
      ],
    };
  }
  async readRowAt(table: string, key: Record<string, JsonValue>, _c: string[], at: Timestamp) {
    const id = Number(key.Id);
    const val = this.script.rowAt(table, id, at);
    return val === null ? null : { Id: String(id), Val: val };
  }
}
