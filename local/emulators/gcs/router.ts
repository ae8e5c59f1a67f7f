/**
 * Maps JSON API paths onto handlers. JSON routes are served both under `/storage/v1` (what `apiEndpoint`
 * produces) and at the root (what `STORAGE_EMULATOR_HOST` produces, the env value being used verbatim as the
 * base URL); uploads live under `/upload/storage/v1`. Each route has a fault-injection key named after the
 * API method (`objects.insert`, `objects.get`, ...; media downloads are `objects.download`).
 */
import * as b from './buckets';
import { download } from './download';
import * as h from './handlers';
import type { Reply, RouteContext } from './http';
import type { UploadSessions } from './uploads';

/** A matched route: its fault key, handler and decoded path parameters. */
export interface Match {
  method: string;
  handle: (ctx: RouteContext) => Reply;
  params: string[];
}

type Table = Array<[string, RegExp, string, (ctx: RouteContext) => Reply]>;

const OBJECT = '/b/([^/]+)/o/(.+)';

function table(uploads: UploadSessions): Table {
  return [
    ['POST', /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/, 'objects.insert', (c) => uploads.start(c)],
    ['PUT', /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/, 'objects.insert', (c) => uploads.put(c)],
    ['GET', /^\/download\/storage\/v1\/b\/([^/]+)\/o\/(.+)$/, 'objects.download', download],
    ['GET', /^\/b$/, 'buckets.list', b.listBuckets],
    ['POST', /^\/b$/, 'buckets.insert', b.insertBucket],
    ['GET', /^\/b\/([^/]+)$/, 'buckets.get', b.getBucket],
    ['PATCH', /^\/b\/([^/]+)$/, 'buckets.patch', b.patchBucket],
    ['PUT', /^\/b\/([^/]+)$/, 'buckets.update', b.patchBucket],
    ['DELETE', /^\/b\/([^/]+)$/, 'buckets.delete', b.deleteBucket],
    ['GET', /^\/b\/([^/]+)\/o$/, 'objects.list', h.listObjects],
    ['POST', new RegExp(`^${OBJECT}/copyTo${OBJECT}$`), 'objects.copy', h.copyObject],
    ['POST', new RegExp(`^${OBJECT}/rewriteTo${OBJECT}$`), 'objects.rewrite', h.copyObject],
    ['POST', new RegExp(`^${OBJECT}/compose$`), 'objects.compose', h.composeObject],
    ['GET', new RegExp(`^${OBJECT}$`), 'objects.get', h.getObject],
    ['PATCH', new RegExp(`^${OBJECT}$`), 'objects.patch', h.patchObject],
    ['PUT', new RegExp(`^${OBJECT}$`), 'objects.update', h.patchObject],
    ['DELETE', new RegExp(`^${OBJECT}$`), 'objects.delete', h.deleteObject],
  ];
}

/** Builds the matcher. Paths are matched still percent-encoded, so `%2F` in object names stays inside one segment. */
export function router(
  uploads: UploadSessions,
): (method: string, rawPath: string, url: URL) => Match | undefined {
  const routes = table(uploads);
  return (method, rawPath, url) => {
    const path = rawPath.startsWith('/storage/v1/') ? rawPath.slice('/storage/v1'.length) : rawPath;
    const verb = method === 'HEAD' ? 'GET' : method;
    for (const [m, pattern, key, handle] of routes) {
      if (m !== verb) continue;
      const found = pattern.exec(path);
      if (!found) continue;
      const params = found.slice(1).map((p) => decodeURIComponent(p ?? ''));
      const isMedia = key === 'objects.get' && url.searchParams.get('alt') === 'media';
      return { method: isMedia ? 'objects.download' : key, handle, params };
    }
    return undefined;
  };
}
