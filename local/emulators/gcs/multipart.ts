/**
 * Parses the `multipart/related` body of a multipart upload: a JSON metadata part, then the media part.
 * The Node client streams it chunked, with CRLF line breaks and no CRLF after the closing delimiter.
 */
import { invalid } from './errors';

/** One part: its headers (lower-cased names) and raw bytes. */
export interface Part {
  headers: Record<string, string>;
  body: Buffer;
}

/** The boundary parameter of a `multipart/*` content type. */
export function boundaryOf(contentType: string | undefined): string {
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  const boundary = match?.[1] ?? match?.[2];
  if (!boundary) throw invalid('multipart upload without a boundary');
  return boundary;
}

function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** Splits `body` into its parts. */
export function parseMultipart(body: Buffer, boundary: string): Part[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Part[] = [];
  let start = body.indexOf(delimiter);
  if (start < 0) throw invalid('multipart body without its boundary');
  for (let guard = 0; guard < 100; guard++) {
    const afterDelimiter = start + delimiter.length;
    if (body.subarray(afterDelimiter, afterDelimiter + 2).toString() === '--') break;
    const headerStart = afterDelimiter + 2; // skip CRLF
    const headerEnd = body.indexOf('\r\n\r\n', headerStart);
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headerStart);
    if (headerEnd < 0 || next < 0 || headerEnd > next) throw invalid('malformed multipart body');
    parts.push({
      headers: parseHeaders(body.subarray(headerStart, headerEnd).toString('utf8')),
      body: body.subarray(headerEnd + 4, next),
    });
    start = next + 2;
  }
  return parts;
}
