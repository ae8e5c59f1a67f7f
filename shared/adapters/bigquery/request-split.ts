/** Splitting a batch of rows into AppendRows requests under the request size limit. */

/**
 * Splits serialized rows, in order, into groups whose size (plus a few bytes of framing per row) stays within
 * `maxBytes`; the default budget leaves a wide margin under BigQuery's limit for the descriptor and the
 * request's other fields. A single row over the budget is sent alone and BigQuery's own limit decides.
 */
export function splitRequests(rows: Uint8Array[], maxBytes: number): Uint8Array[][] {
  const requests: Uint8Array[][] = [];
  let current: Uint8Array[] = [];
  let size = 0;
  for (const row of rows) {
    const bytes = row.byteLength + 8;
    if (current.length > 0 && size + bytes > maxBytes) {
      requests.push(current);
      current = [];
      size = 0;
    }
    current.push(row);
    size += bytes;
  }
  if (current.length > 0) requests.push(current);
  return requests;
}
