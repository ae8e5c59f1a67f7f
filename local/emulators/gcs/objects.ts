/**
 * The stored form of an object version and its JSON API resource. Hashes are computed once at write time:
 * the client checks `crc32c` of every upload response and deletes the object when it is missing or wrong.
 */
import { createHash } from 'node:crypto';
import { CRC32C } from '@google-cloud/storage';

/** Metadata fields a client may set on upload or patch. */
export interface WritableMetadata {
  contentType?: string;
  contentEncoding?: string;
  contentDisposition?: string;
  contentLanguage?: string;
  cacheControl?: string;
  /** RFC 3339; lifecycle rules (`daysSinceCustomTime`) key on it. */
  customTime?: string;
  /** Custom metadata; listing returns it, which the ledger relies on. */
  metadata?: Record<string, string>;
}

/** One live object version. */
export interface StoredObject extends WritableMetadata {
  bucket: string;
  name: string;
  data: Buffer;
  generation: bigint;
  metageneration: bigint;
  crc32c: string;
  md5Hash: string;
  /** Nanoseconds since the epoch (bigint, like every timestamp in the project). */
  timeCreated: bigint;
  updated: bigint;
  /** When a noncurrent version stopped being live (versioned buckets). */
  timeDeleted?: bigint;
}

/** base64 of the big-endian CRC32C (Castagnoli) of `data`, as GCS reports it. */
export function crc32cOf(data: Buffer): string {
  const c = new CRC32C();
  c.update(data);
  return c.toString();
}

/** base64 of the MD5 digest of `data`. */
export function md5Of(data: Buffer): string {
  return createHash('md5').update(data).digest('base64');
}

/** RFC 3339 with millisecond precision, the form GCS uses for object times. */
function rfc3339(nanos: bigint): string {
  return new Date(Number(nanos / 1_000_000n)).toISOString();
}

/** The `storage#object` resource. `base` is the JSON API root used for `selfLink`/`mediaLink`. */
export function objectResource(o: StoredObject, base: string): Record<string, unknown> {
  const enc = encodeURIComponent(o.name);
  const resource: Record<string, unknown> = {
    kind: 'storage#object',
    id: `${o.bucket}/${o.name}/${o.generation}`,
    selfLink: `${base}/storage/v1/b/${o.bucket}/o/${enc}`,
    mediaLink: `${base}/download/storage/v1/b/${o.bucket}/o/${enc}?generation=${o.generation}&alt=media`,
    name: o.name,
    bucket: o.bucket,
    generation: o.generation.toString(),
    metageneration: o.metageneration.toString(),
    contentType: o.contentType ?? 'application/octet-stream',
    storageClass: 'STANDARD',
    size: String(o.data.length),
    md5Hash: o.md5Hash,
    crc32c: o.crc32c,
    etag: etagOf(o),
    timeCreated: rfc3339(o.timeCreated),
    updated: rfc3339(o.updated),
    timeStorageClassUpdated: rfc3339(o.timeCreated),
  };
  for (const key of [
    'contentEncoding',
    'contentDisposition',
    'contentLanguage',
    'cacheControl',
    'customTime',
  ] as const) {
    if (o[key] !== undefined) resource[key] = o[key];
  }
  if (o.metadata && Object.keys(o.metadata).length > 0) resource['metadata'] = { ...o.metadata };
  if (o.timeDeleted !== undefined) resource['timeDeleted'] = rfc3339(o.timeDeleted);
  return resource;
}

/** An etag that changes with generation and metageneration, as the real one does. */
export function etagOf(o: StoredObject): string {
  return Buffer.from(`${o.generation}/${o.metageneration}`).toString('base64');
}
