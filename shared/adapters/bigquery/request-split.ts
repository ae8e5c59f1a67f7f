/** Splitting a batch of rows into AppendRows requests under the request size limit. */

/**
 * Splits rows, in order, into groups whose JSON text stays within `maxBytes` (the protobuf encoding of these
 * rows is about as large as their JSON or smaller — no key names, binary numbers, decoded base64 — and the
 * default budget leaves a wide margin under BigQuery's limit). A single row over the budget is sent
 * alone and BigQuery's own limit decides.
 */
export function splitRequests<T>(rows: T[], maxBytes: number): T[][] {
  const requests: T[][] = [];
  let current: T[] = [];
  let size = 0;
  for (const row of rows) {
    const bytes = Buffer.byteLength(JSON.stringify(row)) + 8;
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
