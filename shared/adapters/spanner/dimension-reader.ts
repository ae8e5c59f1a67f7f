/**
 * {@link DimensionReader} over Spanner: one read of a key set per call, single-use, at exactly the commit
 * timestamp (or strong for `latest`): one `streamingRead` request with a single-use transaction, its raw
 * PartialResultSets assembled in wire form (ADR-1404), so values are mapped by the types the read
 * itself reports — never through the client's value objects — and those types are handed back for the
 * enricher to compare with the lookup's. Keys are sent as protobuf values built from their wire form (exact
 * for every key type: a FLOAT64 stays a number, a TIMESTAMP keeps its nine digits), and each returned row is
 * matched to its requested key by the key's canonical identity, whatever spelling each side carries.
 */
import type { Database } from '@google-cloud/spanner';
import type { JsonValue, SpannerType } from '../../domain/change-record';
import { keyIdentity } from '../../domain/enrichment/key-forms';
import { SluiceError } from '../../domain/errors';
import type { TableColumn, TableSchema } from '../../domain/information-schema';
import { parseTypeJson } from '../../domain/spanner-types';
import type { Timestamp } from '../../domain/timestamp';
import type { ValueIssue, WriterValue } from '../../domain/value-mapping';
import { planWireColumns, wireRowToWriterRow } from '../../domain/wire-row';
import type { DimensionReader, DimensionRows, KeyValues } from '../../ports/dimension-reader';
import { singleUseRead, type WireResult } from './gapic-stream';

/** A key value in wire form → `google.protobuf.Value` (FLOAT64 as a number unless NaN / ±Infinity text). */
function protoValue(type: SpannerType, value: JsonValue): Record<string, unknown> {
  if (value === null) return { nullValue: 'NULL_VALUE' };
  if ((type.code === 'FLOAT64' || type.code === 'FLOAT32') && typeof value === 'string') {
    const n = Number(value);
    return Number.isFinite(n) ? { numberValue: n } : { stringValue: value };
  }
  if (typeof value === 'number')
    return type.code === 'FLOAT64' || type.code === 'FLOAT32'
      ? { numberValue: value }
      : { stringValue: String(value) };
  if (typeof value === 'boolean') return { boolValue: value };
  return { stringValue: String(value) };
}

/** Reads dimension rows; `schemaOf` gives a table's schema (the catalog's, cached there). */
export class SpannerDimensionReader implements DimensionReader {
  constructor(
    private readonly database: Database,
    private readonly schemaOf: (table: string) => Promise<TableSchema>,
    private readonly onValueIssues?: (table: string, issues: ValueIssue[]) => void,
  ) {}

  async read(
    table: string,
    keys: KeyValues[],
    columns: string[],
    at: Timestamp | 'latest',
  ): Promise<DimensionRows> {
    if (keys.length === 0) return { rows: [], types: {} };
    const schema = await this.schemaOf(table);
    // A brought column the dimension no longer has (dropped since the lookup was resolved) is an error
    // naming it: selecting only the columns that exist would give every row a silent NULL.
    const gone = columns.filter((c) => !schema.columns.some((x) => x.name === c));
    if (gone.length > 0)
      throw new SluiceError(
        'permanent',
        `dimension table ${table} has no column ${gone.join(', ')} (a lookup brings it): restore the column or change the lookup in SLUICE_TABLES, then retry the partition`,
      );
    const selected = schema.columns
      .filter((c) => columns.includes(c.name) || schema.primaryKey.includes(c.name))
      .map((c) => c.name);
    // Key types cannot change in Spanner, so the schema's encode the request and identify returned rows.
    const keyTypes = schema.primaryKey.map((name) => schema.columns.find((c) => c.name === name)!.type);
    const keySet = { keys: keys.map((k) => ({ values: k.map((v, i) => protoValue(keyTypes[i]!, v)) })) };
    const { fields, rows } = await this.wireRead(table, keySet, selected, at);
    const types: Record<string, SpannerType> = {};
    const resultColumns: TableColumn[] = fields.map((f, i) => {
      const type = parseTypeJson(f.type, `${table} read.rowType.fields[${i}] (column ${table}.${f.name})`);
      types[f.name] = type;
      return { name: f.name, type, nullable: true, ordinalPosition: i + 1 };
    });
    const plan = planWireColumns(
      resultColumns.map((c) => c.name),
      { name: table, columns: resultColumns, primaryKey: [] },
    );
    const keyAt = schema.primaryKey.map((name) => fields.findIndex((f) => f.name === name));
    const byKey = new Map<string, Record<string, WriterValue>>();
    const issues: ValueIssue[] = [];
    for (const values of rows)
      byKey.set(
        keyIdentity(
          keyTypes,
          keyAt.map((i) => values[i] ?? null),
        ),
        wireRowToWriterRow(values, plan, issues),
      );
    if (issues.length > 0) this.onValueIssues?.(table, issues);
    return { rows: keys.map((k) => byKey.get(keyIdentity(keyTypes, k)) ?? null), types };
  }

  /** One single-use read (`gapic-stream.ts`), in wire form. */
  private async wireRead(
    table: string,
    keySet: unknown,
    columns: string[],
    at: Timestamp | 'latest',
  ): Promise<WireResult> {
    try {
      return await singleUseRead(this.database, { table, columns, keySet }, at === 'latest' ? undefined : at);
    } catch (err) {
      // A failure of the stream itself (its code says which kind) stays as the service gave it; one of
      // assembling the result is retried with the window.
      if ((err as { code?: unknown }).code !== undefined) throw err;
      throw new SluiceError('retryable', `dimension read of ${table}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
}
