/**
 * The service's size limits, as the emulator enforces them (the mutation count is `mutation-count.ts`): a
 * commit of at most 100 MiB of mutation data (counted as it travels: BYTES in base64), refused beyond as the
 * service refuses it (INVALID_ARGUMENT, not retried by clients); 10 MiB per BYTES cell, 2,621,440 characters per STRING cell
 * (10 MiB / 4), or the column's declared length when smaller, array elements one by one. Messages up to
 * twice the commit limit are received (so an oversized commit gets the service's answer, not the transport's)
 * and responses are cut into PartialResultSets of about 1 MiB, splitting a large value as the service does.
 */
import { Code, SpannerError, type WireValue } from './hooks';
import { valueExceedsLimit } from './messages';
import type { MutationJson } from './mutation-json';
import type { Table } from './schema';
import type { Row } from './storage';
import type { ProtoValue, StoredValue } from './values';

/** Largest commit, in bytes of mutation data (the service's `Maximum size: 104857600`). */
export const MAX_COMMIT_BYTES = 100 * 1024 * 1024;
/** The gRPC server's receive and send limits. */
export const MAX_MESSAGE_BYTES = 2 * MAX_COMMIT_BYTES;
/** Largest BYTES value. */
export const MAX_BYTES_CELL = 10 * 1024 * 1024;
/** Largest STRING value, in characters. */
export const MAX_STRING_CELL = MAX_BYTES_CELL / 4;
/** Target size of one PartialResultSet (the service's streaming chunk size). */
export const STREAMING_CHUNK_BYTES = 1024 * 1024;

/** Characters of a string as Spanner counts them (code points, not UTF-16 units). */
function codePoints(text: string): number {
  let surrogates = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff) surrogates++;
  }
  return text.length - surrogates;
}

function sizeOf(code: string, value: StoredValue | WireValue): number {
  if (value === null) return 0;
  if (code === 'BYTES') {
    if (Buffer.isBuffer(value)) return value.length;
    return typeof value === 'string' ? Buffer.byteLength(value, 'base64') : 0;
  }
  return typeof value === 'string' ? codePoints(value) : 0;
}

/** Rejects a row whose STRING or BYTES cells (or array elements) exceed their column's limit. */
export function checkCellSizes(table: Table, row: Row): void {
  for (const c of table.columns) {
    const value = row[c.name];
    if (value === null || value === undefined) continue;
    const type = c.ct.type;
    const code = type.code === 'ARRAY' ? (type.arrayElementType?.code ?? '') : type.code;
    if (code !== 'STRING' && code !== 'BYTES') continue;
    const max = code === 'BYTES' ? MAX_BYTES_CELL : MAX_STRING_CELL;
    const limit = c.ct.length !== undefined ? Math.min(c.ct.length, max) : max;
    const values: Array<StoredValue | WireValue> =
      type.code === 'ARRAY' ? (JSON.parse(String(value)) as WireValue[]) : [value];
    for (const v of values) {
      const size = sizeOf(code, v);
      if (size > limit) throw valueExceedsLimit(`${table.name}.${c.name}`, size, limit);
    }
  }
}

function protoBytes(v: ProtoValue | undefined): number {
  if (!v) return 0;
  if (typeof v.stringValue === 'string') return v.stringValue.length;
  if (v.listValue) return (v.listValue.values ?? []).reduce((n, e) => n + protoBytes(e), 0);
  return 8;
}

/** Refuses a commit above the service's size limit, with the service's message. */
export function checkCommitBytes(mutations: MutationJson[]): void {
  let bytes = 0;
  for (const m of mutations) {
    const w = m.insert ?? m.update ?? m.insertOrUpdate ?? m.replace;
    for (const r of w?.values ?? []) for (const v of r.values ?? []) bytes += protoBytes(v);
    for (const k of m.delete?.keySet?.keys ?? []) for (const v of k.values ?? []) bytes += protoBytes(v);
  }
  if (bytes > MAX_COMMIT_BYTES)
    throw new SpannerError(
      Code.INVALID_ARGUMENT,
      `The transaction exceeds the maximum total bytes-size that can be handled by Spanner. Please reduce the size or number of the writes, or use fewer indexes. (Maximum size: ${MAX_COMMIT_BYTES})`,
    );
}
