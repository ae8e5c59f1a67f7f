/**
 * In-memory buckets and objects with the JSON API's consistency rules: every mutation checks its
 * preconditions against the live version and applies atomically (the event loop is the lock); generations
 * are unique and strictly increasing microsecond timestamps; metageneration starts at 1 and counts metadata
 * updates. Only live versions are kept (no object versioning).
 */
import { bucketNotFound, GcsError, invalid, objectNotFound } from './errors';
import type { MetadataPatch } from './metadata';
import { applyPatch } from './metadata';
import { crc32cOf, md5Of, type StoredObject } from './objects';
import { checkPreconditions, type Preconditions } from './preconditions';

/** A bucket and its live objects. */
export interface BucketState {
  name: string;
  timeCreated: bigint;
  objects: Map<string, StoredObject>;
}

/** Store behaviour switches. */
export interface StoreOptions {
  /**
   * Minimum milliseconds between two mutations of one object; a faster one is answered 429
   * `rateLimitExceeded` (production allows about one write per second per object). 0 disables.
   */
  minWriteIntervalMs?: number;
}

const BUCKET_NAME = /^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/;

function nowNanos(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

/** The emulator's state. */
export class GcsStore {
  private readonly buckets = new Map<string, BucketState>();
  private readonly lastWriteMs = new Map<string, number>();
  private lastGeneration = 0n;

  constructor(public options: StoreOptions = {}) {}

  /** Creates a bucket; 409 when the name is taken. */
  createBucket(name: string): BucketState {
    if (!BUCKET_NAME.test(name)) throw invalid(`Invalid bucket name: '${name}'`);
    if (this.buckets.has(name)) {
      throw new GcsError(
        409,
        'Your previous request to create the named bucket succeeded and you already own it.',
      );
    }
    const bucket: BucketState = { name, timeCreated: nowNanos(), objects: new Map() };
    this.buckets.set(name, bucket);
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

  /** Deletes an empty bucket; 409 when it still holds objects. */
  deleteBucket(name: string): void {
    if (this.bucket(name).objects.size > 0) {
      throw new GcsError(409, 'The bucket you tried to delete is not empty.');
    }
    this.buckets.delete(name);
  }

  /** The live object, checked against `pre` (and `generation` when given); 404 when absent. */
  getObject(bucket: string, name: string, pre: Preconditions = {}, generation?: bigint): StoredObject {
    const current = this.bucket(bucket).objects.get(name);
    if (!current || (generation !== undefined && generation !== current.generation)) {
      throw objectNotFound(bucket, name);
    }
    checkPreconditions(current, pre);
    return current;
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
    const objects = this.bucket(bucket).objects;
    const current = objects.get(name);
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
    objects.set(name, stored);
    return stored;
  }

  /** Changes metadata (PATCH, or PUT with `replace`); bumps metageneration. */
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
    return next;
  }

  /** Deletes the live object; 404 when absent. */
  deleteObject(bucket: string, name: string, pre: Preconditions): void {
    this.getObject(bucket, name, pre);
    this.admitWrite(bucket, name);
    this.bucket(bucket).objects.delete(name);
  }

  /** Every live object of a bucket, sorted by name (the JSON API's listing order). */
  listObjects(bucket: string): StoredObject[] {
    return [...this.bucket(bucket).objects.values()].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
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
