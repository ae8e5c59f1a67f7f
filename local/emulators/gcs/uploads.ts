/**
 * `objects.insert` through `/upload/storage/v1/b/{bucket}/o` with `uploadType` `media`, `multipart` or
 * `resumable`. Preconditions travel in the query string of the first request; for resumable uploads they are
 * kept with the session and checked when the last byte arrives, as the real service does.
 */
import { randomUUID } from 'node:crypto';
import { GcsError, invalid } from './errors';
import { json, jsonBody, param, type Reply, type RouteContext } from './http';
import { type MetadataPatch, parseMetadata } from './metadata';
import { boundaryOf, parseMultipart } from './multipart';
import { crc32cOf, md5Of, objectResource } from './objects';
import { type Preconditions, parsePreconditions } from './preconditions';

interface Session {
  bucket: string;
  name: string;
  meta: MetadataPatch;
  pre: Preconditions;
  chunks: Buffer[];
  received: number;
  result?: Record<string, unknown>;
}

/** Open resumable upload sessions by id. */
export class UploadSessions {
  private readonly sessions = new Map<string, Session>();

  /** `POST .../o?uploadType=...`: a whole upload, or the start of a resumable one. */
  start(ctx: RouteContext): Reply {
    const bucket = param(ctx, 0);
    const type = ctx.url.searchParams.get('uploadType') ?? 'media';
    const pre = parsePreconditions(ctx.url.searchParams);
    ctx.store.bucket(bucket);
    if (type === 'multipart') return finish(ctx, bucket, ...multipartParts(ctx), pre);
    if (type === 'media') {
      const contentType = ctx.req.headers['content-type'];
      return finish(ctx, bucket, { contentType: contentType ?? null }, ctx.body, pre);
    }
    if (type !== 'resumable') throw invalid(`Unsupported uploadType: ${type}`);
    const meta = parseMetadata(jsonBody(ctx));
    const name = ctx.url.searchParams.get('name') ?? meta.name;
    if (!name) throw invalid('Required object name is missing.');
    const contentType = ctx.req.headers['x-upload-content-type'];
    if (typeof contentType === 'string' && !meta.contentType) meta.contentType = contentType;
    const id = randomUUID();
    this.sessions.set(id, { bucket, name, meta, pre, chunks: [], received: 0 });
    const location = `${ctx.base}/upload/storage/v1/b/${encodeURIComponent(bucket)}/o?uploadType=resumable&name=${encodeURIComponent(name)}&upload_id=${id}`;
    return { status: 200, headers: { location }, json: {} };
  }

  /** `PUT ...?upload_id=`: one chunk, the last chunk, or a status query (`Content-Range: bytes *\/*`). */
  put(ctx: RouteContext): Reply {
    const id = ctx.url.searchParams.get('upload_id') ?? '';
    const session = this.sessions.get(id);
    if (!session) throw new GcsError(404, `No such upload session: ${id}`);
    if (session.result) return json(session.result);
    const range = parseContentRange(ctx.req.headers['content-range']);
    // A resent chunk overlaps what is already stored: keep only the new tail.
    const skip = range.first !== undefined ? Math.max(0, session.received - range.first) : 0;
    const fresh = ctx.body.subarray(Math.min(skip, ctx.body.length));
    if (fresh.length > 0) {
      session.chunks.push(fresh);
      session.received += fresh.length;
    }
    const complete = range.total !== undefined ? range.total === session.received : range.lastUnknown;
    if (!complete) {
      // The status answer has no body: `content-length: 0`, and `range` once some bytes are stored.
      const headers: Record<string, string> = { 'content-length': '0' };
      if (session.received > 0) headers.range = `bytes=0-${session.received - 1}`;
      return { status: 308, headers };
    }
    const reply = finish(
      ctx,
      session.bucket,
      session.meta,
      Buffer.concat(session.chunks),
      session.pre,
      session.name,
    );
    session.result = reply.json as Record<string, unknown>;
    return reply;
  }
}

/** `Content-Range` of a resumable PUT: first byte, whether the last is `*`, and the total when known. */
function parseContentRange(header: string | undefined): {
  first?: number;
  lastUnknown: boolean;
  total?: number;
} {
  if (!header) return { lastUnknown: true };
  const match = /^bytes (?:\*|(\d+)-(\d+|\*))\/(\d+|\*|undefined)$/.exec(header);
  if (!match) throw invalid(`Invalid Content-Range: ${header}`);
  const total = match[3] !== undefined && /^\d+$/.test(match[3]) ? Number(match[3]) : undefined;
  return {
    first: match[1] !== undefined ? Number(match[1]) : undefined,
    lastUnknown: match[2] === '*',
    total,
  };
}

/** The largest metadata part the service accepts in a multipart upload. */
const MAX_METADATA_PART = 2 * 1024 * 1024;

function multipartParts(ctx: RouteContext): [MetadataPatch, Buffer] {
  const parts = parseMultipart(ctx.body, boundaryOf(ctx.req.headers['content-type']));
  const [metaPart, mediaPart] = parts;
  if (!metaPart || !mediaPart) throw invalid('multipart upload needs a metadata part and a media part');
  if (metaPart.body.length > MAX_METADATA_PART) {
    const e = invalid('Metadata part is too large.');
    e.plainText = true;
    throw e;
  }
  const meta = parseMetadata(JSON.parse(metaPart.body.toString('utf8')));
  if (!meta.contentType && mediaPart.headers['content-type'])
    meta.contentType = mediaPart.headers['content-type'];
  return [meta, mediaPart.body];
}

/** Hashes the client sent: in the metadata, or as `X-Goog-Hash: crc32c=…,md5=…` on the (last) request. */
function sentHashes(ctx: RouteContext, meta: MetadataPatch): { crc32c?: string; md5?: string } {
  const out: { crc32c?: string; md5?: string } = { crc32c: meta.crc32c, md5: meta.md5Hash };
  for (const part of String(ctx.req.headers['x-goog-hash'] ?? '').split(',')) {
    const at = part.indexOf('=');
    const [k, v] = [part.slice(0, at).trim(), part.slice(at + 1).trim()];
    if (k === 'crc32c') out.crc32c = v;
    if (k === 'md5') out.md5 = v;
  }
  return out;
}

/** Refuses data whose hashes differ from the ones the client sent, as the service does (nothing is stored). */
function checkHashes(ctx: RouteContext, meta: MetadataPatch, data: Buffer): void {
  const sent = sentHashes(ctx, meta);
  const crc = crc32cOf(data);
  if (sent.crc32c !== undefined && sent.crc32c !== crc)
    throw invalid(`Provided CRC32C "${sent.crc32c}" doesn't match calculated CRC32C "${crc}".`);
  const md5 = md5Of(data);
  if (sent.md5 !== undefined && sent.md5 !== md5)
    throw invalid(`Provided MD5 hash "${sent.md5}" doesn't match calculated MD5 hash "${md5}".`);
}

function finish(
  ctx: RouteContext,
  bucket: string,
  meta: MetadataPatch,
  data: Buffer,
  pre: Preconditions,
  sessionName?: string,
): Reply {
  const name = sessionName ?? ctx.url.searchParams.get('name') ?? meta.name;
  if (!name) throw invalid('Required object name is missing.');
  checkHashes(ctx, meta, data);
  const stored = ctx.store.insertObject(bucket, name, Buffer.from(data), meta, pre);
  return json(objectResource(stored, ctx.base));
}
