/**
 * JSON API handlers for objects (except uploads and media downloads). Each one is a plain function of the
 * request context; the router maps paths and methods onto them.
 */
import { download } from './download';
import { invalid } from './errors';
import { generationParam, json, jsonBody, param, type Reply, type RouteContext } from './http';
import { listPage, parseListQuery } from './list';
import { parseMetadata } from './metadata';
import { objectResource } from './objects';
import { parsePreconditions } from './preconditions';

/** `GET /b/{bucket}/o`. */
export function listObjects(ctx: RouteContext): Reply {
  const q = parseListQuery(ctx.url.searchParams);
  const page = listPage(ctx.store.listObjects(param(ctx, 0), q.versions === 'true'), q);
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

/** `PATCH` (merge) or `PUT` (replace) of object metadata. */
export function patchObject(ctx: RouteContext): Reply {
  const pre = parsePreconditions(ctx.url.searchParams);
  const patch = parseMetadata(jsonBody(ctx));
  const o = ctx.store.patchObject(param(ctx, 0), param(ctx, 1), patch, pre, ctx.req.method === 'PUT');
  return json(objectResource(o, ctx.base));
}

/** `DELETE /b/{bucket}/o/{object}`. */
export function deleteObject(ctx: RouteContext): Reply {
  const pre = parsePreconditions(ctx.url.searchParams);
  ctx.store.deleteObject(param(ctx, 0), param(ctx, 1), pre, generationParam(ctx.url));
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
