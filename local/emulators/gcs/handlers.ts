/**
 * JSON API handlers for buckets and objects (everything except uploads). Each one is a plain function of the
 * request context; the router maps paths and methods onto them.
 */
import { GcsError, invalid } from './errors';
import { generationParam, json, jsonBody, param, type Reply, type RouteContext } from './http';
import { listPage, parseListQuery } from './list';
import { parseMetadata } from './metadata';
import { etagOf, objectResource } from './objects';
import { parsePreconditions } from './preconditions';
import type { BucketState } from './store';

function bucketResource(b: BucketState): Record<string, unknown> {
  const created = new Date(Number(b.timeCreated / 1_000_000n)).toISOString();
  return {
    kind: 'storage#bucket',
    id: b.name,
    name: b.name,
    projectNumber: '0',
    metageneration: '1',
    location: 'US',
    locationType: 'multi-region',
    storageClass: 'STANDARD',
    etag: 'CAE=',
    timeCreated: created,
    updated: created,
  };
}

/** `POST /b?project=`. */
export function insertBucket(ctx: RouteContext): Reply {
  const body = jsonBody(ctx);
  const name = typeof body === 'object' && body !== null && 'name' in body ? body.name : undefined;
  if (typeof name !== 'string') throw invalid('Required bucket name is missing.');
  return json(bucketResource(ctx.store.createBucket(name)));
}

/** `GET /b?project=`. */
export function listBuckets(ctx: RouteContext): Reply {
  return json({ kind: 'storage#buckets', items: ctx.store.listBuckets().map(bucketResource) });
}

/** `GET /b/{bucket}` (and PATCH, which the emulator accepts without changing anything). */
export function getBucket(ctx: RouteContext): Reply {
  return json(bucketResource(ctx.store.bucket(param(ctx, 0))));
}

/** `DELETE /b/{bucket}`. */
export function deleteBucket(ctx: RouteContext): Reply {
  ctx.store.deleteBucket(param(ctx, 0));
  return { status: 204 };
}

/** `GET /b/{bucket}/o`. */
export function listObjects(ctx: RouteContext): Reply {
  const page = listPage(ctx.store.listObjects(param(ctx, 0)), parseListQuery(ctx.url.searchParams));
  const out: Record<string, unknown> = {
    kind: 'storage#objects',
    items: page.items.map((o) => objectResource(o, ctx.base)),
  };
  if (page.prefixes.length > 0) out['prefixes'] = page.prefixes;
  if (page.nextPageToken) out['nextPageToken'] = page.nextPageToken;
  return json(out);
}

/** `GET /b/{bucket}/o/{object}`: metadata, or the media with `alt=media`. */
export function getObject(ctx: RouteContext): Reply {
  if (ctx.url.searchParams.get('alt') === 'media') return download(ctx);
  const pre = parsePreconditions(ctx.url.searchParams);
  const o = ctx.store.getObject(param(ctx, 0), param(ctx, 1), pre, generationParam(ctx.url));
  return json(objectResource(o, ctx.base));
}

/** Media download, with the hash and generation headers the client validates against. */
export function download(ctx: RouteContext): Reply {
  const pre = parsePreconditions(ctx.url.searchParams);
  const o = ctx.store.getObject(param(ctx, 0), param(ctx, 1), pre, generationParam(ctx.url));
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
  const range = /^bytes=(\d*)-(\d*)$/.exec(ctx.req.headers.range ?? '');
  if (!range || (range[1] === '' && range[2] === '')) return { status: 200, headers, body: o.data };
  const size = o.data.length;
  const start = range[1] === '' ? Math.max(0, size - Number(range[2])) : Number(range[1]);
  const end = range[1] === '' || range[2] === '' ? size - 1 : Math.min(Number(range[2]), size - 1);
  if (start >= size)
    throw new GcsError(416, 'The requested range cannot be satisfied.', 'requestedRangeNotSatisfiable');
  headers['content-range'] = `bytes ${start}-${end}/${size}`;
  return { status: 206, headers, body: o.data.subarray(start, end + 1) };
}

/** `PATCH` (merge) or `PUT` (replace) of object metadata. */
export function patchObject(ctx: RouteContext): Reply {
  const pre = parsePreconditions(ctx.url.searchParams);
  const patch = parseMetadata(jsonBody(ctx));
  const o = ctx.store.patchObject(param(ctx, 0), param(ctx, 1), patch, pre, ctx.req.method === 'PUT');
  return json(objectResource(o, ctx.base));
}

/** `DELETE /b/{bucket}/o/{object}`. */
export function deleteObject(ctx: RouteContext): Reply {
  ctx.store.deleteObject(param(ctx, 0), param(ctx, 1), parsePreconditions(ctx.url.searchParams));
  return { status: 204 };
}

/** `copyTo` and `rewriteTo`: source preconditions use `ifSource...`, destination ones the plain names. */
export function copyObject(ctx: RouteContext): Reply {
  const source = ctx.store.getObject(
    param(ctx, 0),
    param(ctx, 1),
    parsePreconditions(ctx.url.searchParams, true),
    generationParam(ctx.url),
  );
  const override = parseMetadata(jsonBody(ctx));
  const meta = {
    ...source,
    ...Object.fromEntries(Object.entries(override).filter(([, v]) => v !== undefined)),
  };
  const pre = parsePreconditions(ctx.url.searchParams);
  const copy = ctx.store.insertObject(param(ctx, 2), param(ctx, 3), source.data, meta, pre);
  const resource = objectResource(copy, ctx.base);
  if (!ctx.url.pathname.includes('/rewriteTo/')) return json(resource);
  const size = String(copy.data.length);
  return json({
    kind: 'storage#rewriteResponse',
    totalBytesRewritten: size,
    objectSize: size,
    done: true,
    resource,
  });
}

/** `POST /b/{bucket}/o/{destination}/compose`. */
export function composeObject(ctx: RouteContext): Reply {
  const body = jsonBody(ctx);
  const sources =
    typeof body === 'object' && body !== null && 'sourceObjects' in body && Array.isArray(body.sourceObjects)
      ? (body.sourceObjects as unknown[])
      : [];
  if (sources.length === 0 || sources.length > 32) throw invalid('compose needs 1 to 32 source objects');
  const bucket = param(ctx, 0);
  const parts = sources.map((s) => {
    const name = typeof s === 'object' && s !== null && 'name' in s ? s.name : undefined;
    if (typeof name !== 'string') throw invalid('source object without a name');
    return ctx.store.getObject(bucket, name).data;
  });
  const destination =
    typeof body === 'object' && body !== null && 'destination' in body ? parseMetadata(body.destination) : {};
  const pre = parsePreconditions(ctx.url.searchParams);
  const o = ctx.store.insertObject(bucket, param(ctx, 1), Buffer.concat(parts), destination, pre);
  return json(objectResource(o, ctx.base));
}
