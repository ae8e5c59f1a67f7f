/** Splitting a batch of rows into AppendRows requests under the request size limit. */
import { splitBySize } from '../../domain/request-split';

/**
 * Splits serialized rows, in order, into groups whose size (plus a few bytes of framing per row) stays within
 * `maxBytes`; the default budget leaves a wide margin under BigQuery's limit for the descriptor and the
 * request's other fields. A single row over the budget is sent alone and BigQuery's own limit decides.
 */
export function splitRequests(rows: Uint8Array[], maxBytes: number): Uint8Array[][] {
  return splitBySize(rows, (row) => row.byteLength + 8, maxBytes);
}
