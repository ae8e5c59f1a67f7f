/**
 * The Read / StreamingRead / PartitionRead data path: rows of a table (or through a secondary index)
 * whose key is in a key set, in key order, as a view sees them.
 */
import { Code, SpannerError, type WireValue } from './hooks';
import { compareKeys, type KeySetJson, keySetMatcher } from './keys';
import type { QueryContext, QueryResult } from './query';
import type { ReadView, Row } from './storage';
import { storedToWire } from './values';

/** Plain-object ReadRequest fields used here. */
export interface ReadSpec {
  table: string;
  index?: string;
  columns?: string[];
  keySet?: KeySetJson;
  limit?: string | number;
}

/** Reads rows. */
export function readRows(ctx: QueryContext, spec: ReadSpec, view: ReadView): QueryResult {
  const table = ctx.schema.get(spec.table);
  const columns = (spec.columns ?? []).map((c) => ctx.schema.column(table, c));
  const tokens = columns.find((c) => c.ct.type.code === 'TOKENLIST');
  if (tokens)
    throw new SpannerError(
      Code.INVALID_ARGUMENT,
      `Column ${table.name}.${tokens.name} of type TOKENLIST cannot be read; use it in a search function`,
    );
  const index = spec.index ? ctx.schema.indexesByName.get(spec.index.toLowerCase()) : undefined;
  if (spec.index && (!index || index.table !== table.name))
    throw new SpannerError(Code.NOT_FOUND, `Index not found on table ${table.name}: ${spec.index}`);
  const parts = index ? [...index.keys, ...table.primaryKey] : table.primaryKey;
  const sql = `SELECT * FROM (${ctx.storage.viewSql(table, view)})`;
  const rows = ctx.db.prepare(sql).safeIntegers(true).all() as Row[];
  const wire = (r: Row, name: string): WireValue =>
    storedToWire(r[name] ?? null, ctx.schema.column(table, name).ct.type);
  const keyOf = (r: Row) => parts.map((p) => wire(r, p.name));
  // Keys of an index read name the index's declared key columns; the table key only orders ties.
  const keyParts = index ? index.keys : table.primaryKey;
  const match = keySetMatcher(table, keyParts, spec.keySet ?? {});
  let selected = rows
    .map((r) => ({ r, k: keyOf(r) }))
    .filter(({ k }) => match(k.slice(0, keyParts.length)))
    .filter(({ k }) => !index?.nullFiltered || k.slice(0, index.keys.length).every((v) => v !== null));
  selected.sort((a, b) => compareKeys(table, parts, a.k, b.k));
  const limit = Number(spec.limit ?? 0);
  if (limit > 0) selected = selected.slice(0, limit);
  return {
    fields: columns.map((c) => ({ name: c.name, type: c.ct.type })),
    rows: selected.map(({ r }) => columns.map((c) => wire(r, c.name))),
  };
}
