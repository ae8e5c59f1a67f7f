/**
 * Bucket handlers: insert with configuration, get, list (`prefix`, `maxResults`, `pageToken`), PATCH (merge)
 * and PUT (replace) with metageneration preconditions, delete.
 */
import { bucketDefaults, configOf } from './bucket-meta';
import { invalid } from './errors';
import { json, jsonBody, param, type Reply, type RouteContext } from './http';
import { checkPreconditions, parsePreconditions } from './preconditions';
import type { BucketState } from './store';

function iso(ns: bigint): string {
  return new Date(Number(ns / 1_000_000n)).toISOString();
}

/** The `storage#bucket` resource: the service's defaults, then what the client set, then computed fields. */
export function bucketResource(b: BucketState, base: string): Record<string, unknown> {
  const defaults = Object.fromEntries(
    Object.entries(bucketDefaults(b.config)).filter(([, v]) => v !== undefined),
  );
  return {
    kind: 'storage#bucket',
    selfLink: `${base}/storage/v1/b/${encodeURIComponent(b.name)}`,
    id: b.name,
    name: b.name,
    projectNumber: '0',
    ...defaults,
    ...b.config,
    location: defaults['location'],
    metageneration: b.metageneration.toString(),
    etag: Buffer.from(`${b.name}/${b.metageneration}`).toString('base64'),
    timeCreated: iso(b.timeCreated),
    updated: iso(b.updated),
  };
}

/** `POST /b?project=`. */
export function insertBucket(ctx: RouteContext): Reply {
  const body = jsonBody(ctx);
  const name = typeof body === 'object' && body !== null && 'name' in body ? body.name : undefined;
  if (typeof name !== 'string') throw invalid('Required bucket name is missing.');
  return json(bucketResource(ctx.store.createBucket(name, configOf(body)), ctx.base));
}

/** `GET /b?project=[&prefix=][&maxResults=][&pageToken=]`. */
export function listBuckets(ctx: RouteContext): Reply {
  const q = ctx.url.searchParams;
  const prefix = q.get('prefix') ?? '';
  const token = q.get('pageToken');
  const after = token ? Buffer.from(token, 'base64url').toString('utf8') : undefined;
  const max = Math.min(Number(q.get('maxResults') ?? 1000) || 1000, 1000);
  const all = ctx.store
    .listBuckets()
    .filter((b) => b.name.startsWith(prefix) && (after === undefined || b.name > after));
  const page = all.slice(0, max);
  const out: Record<string, unknown> = {
    kind: 'storage#buckets',
    items: page.map((b) => bucketResource(b, ctx.base)),
  };
  const last = page[page.length - 1];
  if (all.length > max && last) out['nextPageToken'] = Buffer.from(last.name, 'utf8').toString('base64url');
  return json(out);
}

/** `GET /b/{bucket}`. */
export function getBucket(ctx: RouteContext): Reply {
  const b = ctx.store.bucket(param(ctx, 0));
  const pre = parsePreconditions(ctx.url.searchParams);
  checkPreconditions(
    { generation: 1n, metageneration: b.metageneration },
    { ...pre, ifGenerationMatch: undefined, ifGenerationNotMatch: undefined },
  );
  return json(bucketResource(b, ctx.base));
}

/** `PATCH /b/{bucket}` (merge) and `PUT /b/{bucket}` (replace). */
export function patchBucket(ctx: RouteContext): Reply {
  const pre = parsePreconditions(ctx.url.searchParams);
  const b = ctx.store.patchBucket(param(ctx, 0), configOf(jsonBody(ctx)), ctx.req.method === 'PUT', pre);
  return json(bucketResource(b, ctx.base));
}

/** `DELETE /b/{bucket}`. */
export function deleteBucket(ctx: RouteContext): Reply {
  ctx.store.deleteBucket(param(ctx, 0));
  return { status: 204 };
}
