/**
 * Media downloads with the headers the client validates against (`x-goog-hash`, generations, stored
 * encoding). An object stored with `Content-Encoding: gzip` is served compressed, with that header, to a
 * client that accepts gzip; to one that does not it is decompressed (decompressive transcoding, Range
 * ignored), unless its Cache-Control says `no-transform`.
 */
import { gunzipSync } from 'node:zlib';
import { GcsError } from './errors';
import { generationParam, param, type Reply, type RouteContext } from './http';
import { etagOf, type StoredObject } from './objects';
import { parsePreconditions } from './preconditions';

function headersOf(o: StoredObject): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': o.contentType ?? 'application/octet-stream',
    'x-goog-hash': `crc32c=${o.crc32c},md5=${o.md5Hash}`,
    'x-goog-generation': o.generation.toString(),
    'x-goog-metageneration': o.metageneration.toString(),
    'x-goog-stored-content-encoding': o.contentEncoding ?? 'identity',
    'x-goog-stored-content-length': String(o.data.length),
    'accept-ranges': 'bytes',
    etag: etagOf(o),
    'last-modified': new Date(Number(o.updated / 1_000_000n)).toUTCString(),
  };
  if (o.cacheControl) headers['cache-control'] = o.cacheControl;
  if (o.contentDisposition) headers['content-disposition'] = o.contentDisposition;
  if (o.contentLanguage) headers['content-language'] = o.contentLanguage;
  return headers;
}

function ranged(data: Buffer, header: string | undefined, headers: Record<string, string>): Reply {
  const range = /^bytes=(\d*)-(\d*)$/.exec(header ?? '');
  if (!range || (range[1] === '' && range[2] === '')) return { status: 200, headers, body: data };
  const size = data.length;
  const start = range[1] === '' ? Math.max(0, size - Number(range[2])) : Number(range[1]);
  const end = range[1] === '' || range[2] === '' ? size - 1 : Math.min(Number(range[2]), size - 1);
  if (start >= size)
    throw new GcsError(416, 'The requested range cannot be satisfied.', 'requestedRangeNotSatisfiable');
  headers['content-range'] = `bytes ${start}-${end}/${size}`;
  return { status: 206, headers, body: data.subarray(start, end + 1) };
}

/** True when an Accept-Encoding header admits gzip (`gzip` or `*` with a non-zero q). */
function acceptsGzip(header: string | undefined): boolean {
  return (header ?? '').split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q=([\d.]+)/.exec(p)?.[1]).find((v) => v !== undefined);
    return (coding === 'gzip' || coding === '*') && (q === undefined || Number(q) > 0);
  });
}

/** `GET …?alt=media` and `/download/storage/v1/…`. */
export function download(ctx: RouteContext): Reply {
  const pre = parsePreconditions(ctx.url.searchParams);
  const o = ctx.store.getObject(param(ctx, 0), param(ctx, 1), pre, generationParam(ctx.url));
  const headers = headersOf(o);
  const gzipped = o.contentEncoding === 'gzip';
  if (
    gzipped &&
    (acceptsGzip(ctx.req.headers['accept-encoding']) || /no-transform/i.test(o.cacheControl ?? ''))
  ) {
    headers['content-encoding'] = 'gzip';
    return ranged(o.data, ctx.req.headers.range, headers);
  }
  if (gzipped) {
    let body: Buffer;
    try {
      body = gunzipSync(o.data);
    } catch {
      // Not really gzip: the service serves the bytes as stored.
      return ranged(o.data, ctx.req.headers.range, headers);
    }
    headers.warning = '214 UploadServer gunzipped';
    return { status: 200, headers, body };
  }
  return ranged(o.data, ctx.req.headers.range, headers);
}
