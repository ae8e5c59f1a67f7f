/**
 * Buckets and objects with the JSON API's consistency rules: every mutation checks its preconditions
 * against the live version and applies atomically (the event loop is the lock); generations are unique and
 * strictly increasing microsecond timestamps; metageneration starts at 1 and counts metadata updates. In a
 * bucket with versioning enabled, an overwritten or deleted live version stays as a noncurrent version.
 */
import { applyConfig, type BucketConfig } from './bucket-meta';
import { bucketNotFound, GcsError, invalid, objectNotFound } from './errors';
import type { MetadataPatch } from './metadata';
import { applyPatch } from './metadata';
import { crc32cOf, md5Of, type StoredObject } from './objects';
import { checkPreconditions, type Preconditions } from './preconditions';

/** A bucket, its live objects and its noncurrent versions. */
export interface BucketState {
  name: string;
  timeCreated: bigint;
  updated: bigint;
  metageneration: bigint;
  config: BucketConfig;
  objects: Map<string, StoredObject>;
  /** Noncurrent versions by name, oldest first (only when versioning was on). */
  noncurrent: Map<string, StoredObject[]>;
}

/** Store behaviour switches. */
export interface StoreOptions {
  /**
   * Minimum milliseconds between two mutations of one object; a faster one is answered 429
   * `rateLimitExceeded` (production allows about one write per second per object). 0 disables.
   */
  minWriteIntervalMs?: number;
  /** Called after every change (persistence). */
  onChange?: (change: StoreChange) => void;
}

/** What changed, for persistence. */
export type StoreChange =
  | { kind: 'bucket'; bucket: string }
  | { kind: 'bucketDeleted'; bucket: string }
  | { kind: 'object'; bucket: string; name: string };

const BUCKET_NAME = /^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/;

function nowNanos(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

function iso(ns: bigint): string {
  return new Date(Number(ns / 1_000_000n)).toISOString();
}

function versioned(b: BucketState): boolean {
  return (b.config['versioning'] as { enabled?: boolean } | undefined)?.enabled === true;
}

/** The emulator's state. */
export class GcsStore {
  readonly buckets = new Map<string, BucketState>();
  private readonly lastWriteMs = new Map<string, number>();
  private lastGeneration = 0n;
  /** Requests served, by API method key (`objects.get`, `objects.list`, …): what a test counts calls by. */
  readonly requests = new Map<string, number>();

  constructor(public options: StoreOptions = {}) {}

  /** Counts one request of an API method (the server calls it for every routed request). */
  countRequest(method: string): void {
    this.requests.set(method, (this.requests.get(method) ?? 0) + 1);
  }

  private changed(change: StoreChange): void {
    this.options.onChange?.(change);
  }

  /** Creates a bucket; 409 when the name is taken. */
  createBucket(name: string, config: BucketConfig = {}): BucketState {
    if (!BUCKET_NAME.test(name)) throw invalid(`Invalid bucket name: '${name}'`);
    if (this.buckets.has(name)) {
      throw new GcsError(
        409,
        'Your previous request to create the named bucket succeeded and you already own it.',
      );
    }
    const now = nowNanos();
    const bucket: BucketState = {
      name,
      timeCreated: now,
      updated: now,
      metageneration: 1n,
      config: applyConfig({}, config, true, iso(now)),
      objects: new Map(),
      noncurrent: new Map(),
    };
    this.buckets.set(name, bucket);
    this.changed({ kind: 'bucket', bucket: name });
    return bucket;
  }

  /** The bucket, or 404. */
  bucket(name: string): BucketState {
    const bucket = this.buckets.get(name);
    if (!bucket) throw bucketNotFound(name);
    return bucket;
  }

  /** Every bucket, by name. */
  listBuckets(): BucketState[] {
    return [...this.buckets.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  /** PATCH (merge) or PUT (replace) of a bucket's configuration; bumps metageneration. */
  patchBucket(name: string, change: BucketConfig, replace: boolean, pre: Preconditions = {}): BucketState {
    const b = this.bucket(name);
    checkPreconditions(
      { generation: 1n, metageneration: b.metageneration },
      { ...pre, ifGenerationMatch: undefined, ifGenerationNotMatch: undefined },
    );
    const now = nowNanos();
    b.config = applyConfig(b.config, change, replace, iso(now));
    b.metageneration += 1n;
    b.updated = now;
    this.changed({ kind: 'bucket', bucket: name });
    return b;
  }

  /** Deletes an empty bucket; 409 when it still holds objects (noncurrent versions count). */
  deleteBucket(name: string): void {
    const b = this.bucket(name);
    if (b.objects.size > 0 || b.noncurrent.size > 0) {
      throw new GcsError(409, 'The bucket you tried to delete is not empty.');
    }
    this.buckets.delete(name);
    this.changed({ kind: 'bucketDeleted', bucket: name });
  }

  /** An object version: the live one, or the given generation (live or noncurrent), checked against `pre`. */
  getObject(bucket: string, name: string, pre: Preconditions = {}, generation?: bigint): StoredObject {
    const b = this.bucket(bucket);
    const live = b.objects.get(name);
    const found =
      generation === undefined || live?.generation === generation
        ? live
        : b.noncurrent.get(name)?.find((o) => o.generation === generation);
    if (!found) throw objectNotFound(bucket, name);
    checkPreconditions(found, pre);
    return found;
  }

  /** Writes a new generation of an object (upload, copy, compose). */
  insertObject(
    bucket: string,
    name: string,
    data: Buffer,
    meta: MetadataPatch,
    pre: Preconditions,
  ): StoredObject {
    if (!name) throw invalid('Required object name is missing.');
    const b = this.bucket(bucket);
    const current = b.objects.get(name);
    checkPreconditions(current, pre);
    this.admitWrite(bucket, name);
    const now = nowNanos();
    const stored: StoredObject = {
      ...applyPatch({}, meta, true),
      bucket,
      name,
      data,
      generation: this.nextGeneration(),
      metageneration: 1n,
      crc32c: crc32cOf(data),
      md5Hash: md5Of(data),
      timeCreated: now,
      updated: now,
    };
    if (current) this.retire(b, current, now);
    b.objects.set(name, stored);
    this.changed({ kind: 'object', bucket, name });
    return stored;
  }

  /** Keeps a replaced or deleted live version as noncurrent when the bucket is versioned. */
  private retire(b: BucketState, o: StoredObject, now: bigint): void {
    if (!versioned(b)) return;
    const list = b.noncurrent.get(o.name) ?? [];
    list.push({ ...o, timeDeleted: now });
    b.noncurrent.set(o.name, list);
  }

  /** Changes metadata (PATCH, or PUT with `replace`) of the live version; bumps metageneration. */
  patchObject(bucket: string, name: string, patch: MetadataPatch, pre: Preconditions, replace = false) {
    const current = this.getObject(bucket, name, pre);
    this.admitWrite(bucket, name);
    const next: StoredObject = {
      ...current,
      contentType: undefined,
      contentEncoding: undefined,
      contentDisposition: undefined,
      contentLanguage: undefined,
      cacheControl: undefined,
      ...applyPatch(current, patch, replace),
      metageneration: current.metageneration + 1n,
      updated: nowNanos(),
    };
    this.bucket(bucket).objects.set(name, next);
    this.changed({ kind: 'object', bucket, name });
    return next;
  }

  /**
   * Deletes the live object (kept as noncurrent in a versioned bucket), or with `generation` that version
   * for good; 404 when absent.
   */
  deleteObject(bucket: string, name: string, pre: Preconditions, generation?: bigint): void {
    const b = this.bucket(bucket);
    const target = this.getObject(bucket, name, pre, generation);
    this.admitWrite(bucket, name);
    if (b.objects.get(name) === target) {
      b.objects.delete(name);
      if (generation === undefined) this.retire(b, target, nowNanos());
    } else {
      const rest = (b.noncurrent.get(name) ?? []).filter((o) => o !== target);
      if (rest.length) b.noncurrent.set(name, rest);
      else b.noncurrent.delete(name);
    }
    this.changed({ kind: 'object', bucket, name });
  }

  /** Objects of a bucket in name order (with `versions`, every generation, oldest first per name). */
  listObjects(bucket: string, versions = false): StoredObject[] {
    const b = this.bucket(bucket);
    const all = [...b.objects.values()];
    if (versions) for (const list of b.noncurrent.values()) all.push(...list);
    return all.sort((x, y) =>
      x.name < y.name
        ? -1
        : x.name > y.name
          ? 1
          : x.generation < y.generation
            ? -1
            : x.generation > y.generation
              ? 1
              : 0,
    );
  }

  /** Restores the generation counter after loading persisted state. */
  noteGeneration(g: bigint): void {
    if (g > this.lastGeneration) this.lastGeneration = g;
  }

  /** Unique, strictly increasing, microseconds since the epoch like production generations. */
  private nextGeneration(): bigint {
    const micros = BigInt(Date.now()) * 1000n;
    this.lastGeneration = micros > this.lastGeneration ? micros : this.lastGeneration + 1n;
    return this.lastGeneration;
  }

  /** Enforces the optional per-object mutation rate (after preconditions, as only real writes count). */
  private admitWrite(bucket: string, name: string): void {
    const interval = this.options.minWriteIntervalMs ?? 0;
    const key = `${bucket}/${name}`;
    const now = Date.now();
    const last = this.lastWriteMs.get(key);
    if (interval > 0 && last !== undefined && now - last < interval) {
      throw new GcsError(
        429,
        'The object exceeded the rate limit for object mutation operations (create, update, and delete).',
      );
    }
    this.lastWriteMs.set(key, now);
  }
}
