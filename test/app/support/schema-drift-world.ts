import { MemoryHistorySink, MemoryReplicaSink } from '../../../shared/adapters/memory/sinks';
import { historyBatches, writeReplica } from '../../../shared/app/sinks/sink-writer';
import { TableRegistry } from '../../../shared/app/tables/table-registry';
import type {
  DataChangeRecord,
  JsonValue,
  ModType,
  SpannerType,
  ValueCaptureType,
} from '../../../shared/domain/change-record';
import { parseConfigObject } from '../../../shared/domain/config';
import type { TableColumn, TableSchema } from '../../../shared/domain/information-schema';
import { createLogger } from '../../../shared/domain/log';
import { canonicalKey, type KeyColumn } from '../../../shared/domain/row-reads';
import { fromNanos, type Timestamp } from '../../../shared/domain/timestamp';
import type { RowsAt, SchemaReadOptions, SpannerCatalog } from '../../../shared/ports/spanner-catalog';
import { columnTypesOf, soleRecordOfTransaction } from '../../unit/domain/support/change-records';
import { AllTablesCatalog } from './catalog';

export const t = (code: string): SpannerType => ({ code });
export const col = (
  name: string,
  code: string,
  n: number,
  extra: Partial<TableColumn> = {},
): TableColumn => ({
  name,
  type: t(code),
  nullable: name !== 'Id',
  ordinalPosition: n,
  ...extra,
});
export const ts = (n: number): Timestamp => fromNanos(1_700_000_000_000_000_000n + BigInt(n));

/** A catalog with schema versions (by timestamp) and row versions, counting reads. */
export class VersionedCatalog extends AllTablesCatalog implements SpannerCatalog {
  readonly versions: Array<{ from: Timestamp; schema: TableSchema }> = [];
  readonly rows: Array<{ at: Timestamp; table: string; id: string; row: Record<string, JsonValue> | null }> =
    [];
  readonly reads: Array<{ table: string; at: Timestamp; keys: number }> = [];
  schemaReads = 0;
  schemaAt(table: string, at: Timestamp = ts(1_000_000)): TableSchema {
    const v = this.versions.filter((x) => x.schema.name === table && x.from <= at).pop();
    if (!v) throw new Error(`table ${table} not found or has no columns`);
    return v.schema;
  }
  async tableSchema(table: string, options: SchemaReadOptions = {}) {
    this.schemaReads++;
    return this.schemaAt(table, options.at);
  }
  async tableSchemas() {
    return [...new Set(this.versions.map((v) => v.schema.name))].map((n) => this.schemaAt(n));
  }
  async readRowsAt(
    table: string,
    keyColumns: readonly KeyColumn[],
    keys: ReadonlyArray<Record<string, JsonValue>>,
    at: Timestamp,
  ): Promise<RowsAt> {
    this.reads.push({ table, at, keys: keys.length });
    const schema = this.schemaAt(table, at);
    const wanted = new Set(keys.map((k) => canonicalKey(keyColumns, k)));
    const latest = new Map<string, Record<string, JsonValue> | null>();
    for (const r of this.rows) if (r.table === table && r.at <= at) latest.set(r.id, r.row);
    const rows = [...latest.entries()]
      .filter(([id, row]) => row !== null && wanted.has(canonicalKey(keyColumns, { Id: id })))
      .map(([, row]) =>
        Object.fromEntries(
          schema.columns.filter((c) => !c.hidden).map((c) => [c.name, row?.[c.name] ?? null]),
        ),
      );
    return {
      columns: schema.columns.filter((c) => !c.hidden).map((c) => ({ name: c.name, type: c.type })),
      rows,
    };
  }
}

export function record(p: {
  at: Timestamp;
  table?: string;
  modType?: ModType;
  capture?: ValueCaptureType;
  columns: Array<[string, string]>;
  mods: Array<{ id: string; values?: Record<string, JsonValue> }>;
}): DataChangeRecord {
  return soleRecordOfTransaction({
    commitTimestamp: p.at,
    recordSequence: '00000000',
    serverTransactionId: `tx${p.at}`,
    tableName: p.table ?? 'People',
    columnTypes: columnTypesOf(
      p.columns.map(([name, code]) => [name, t(code)]),
      'Id',
    ),
    mods: p.mods.map((m) => ({ keys: { Id: m.id }, newValues: m.values ?? {}, oldValues: {} })),
    modType: p.modType,
    valueCaptureType: p.capture,
  });
}

/** The world another instance shares: one catalog, one BigQuery. */
export interface Shared {
  catalog: VersionedCatalog;
  replica: MemoryReplicaSink;
  history: MemoryHistorySink;
}

export function setup(
  tables: Record<string, unknown> = { '*': { replica: true, history: true } },
  shared?: Shared,
) {
  const catalog = shared?.catalog ?? new VersionedCatalog();
  const replica = shared?.replica ?? new MemoryReplicaSink();
  const history = shared?.history ?? new MemoryHistorySink();
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger((l) => lines.push(JSON.parse(l) as Record<string, unknown>), {}, 'DEBUG');
  const config = parseConfigObject({
    project: 'test-project',
    spanner: { instance: 'inst', database: 'db', stream: 'Changes' },
    bigquery: { dataset: 'ds' },
    ledger: { bucket: 'bucket' },
    tables,
  });
  const registry = new TableRegistry({ catalog, replica, history }, config, log);
  const ports = { catalog, replica, history, tables: registry };
  // History goes on one committed stream per table, as a window appends it (offsets in order).
  const streams = new Map<string, { name: string; offset: number }>();
  const write = async (records: DataChangeRecord[]) => {
    await writeReplica(ports, records, 'fail', log);
    for (const [destination, rows] of await historyBatches(registry, records)) {
      let stream = streams.get(destination);
      if (!stream) {
        stream = { name: (await history.createStream(destination, 'committed')).name, offset: 0 };
        streams.set(destination, stream);
      }
      const out = await history.appendAt(destination, stream.name, stream.offset, rows);
      if (out.kind !== 'appended') throw new Error(`history append ${out.kind}`);
      stream.offset += rows.length;
    }
  };
  return { catalog, replica, history, lines, write, ports, log };
}

export const V1: TableSchema = {
  name: 'People',
  primaryKey: ['Id'],
  columns: [col('Id', 'INT64', 1), col('Name', 'STRING', 2)],
};
/** V1's columns as a change record lists them: name and type code. */
export const V1_COLUMNS: Array<[string, string]> = [
  ['Id', 'INT64'],
  ['Name', 'STRING'],
];
export const V2: TableSchema = { ...V1, columns: [...V1.columns, col('Nick', 'STRING', 3)] };
