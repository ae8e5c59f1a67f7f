/**
 * GCS state on disk (`--data-dir`): object bytes in `blobs/<generation>` (written before the change that
 * refers to them is journaled), metadata as a snapshot plus a journal of whole-entity states (a bucket, or
 * every version of one object name). Replaying sets each entity to its last journaled state.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Journal } from '../common/journal';
import type { StoredObject } from './objects';
import type { BucketState, GcsStore, StoreChange } from './store';

type Meta = Omit<StoredObject, 'data'>;
interface BucketRecord {
  name: string;
  timeCreated: bigint;
  updated: bigint;
  metageneration: bigint;
  config: Record<string, unknown>;
}
interface ObjectRecord {
  bucket: string;
  name: string;
  live?: Meta;
  noncurrent: Meta[];
}
interface Snapshot {
  buckets: BucketRecord[];
  objects: ObjectRecord[];
}
type Event =
  | { k: 'bucket'; b: BucketRecord }
  | { k: 'bucketDeleted'; name: string }
  | { k: 'object'; o: ObjectRecord };

function meta(o: StoredObject): Meta {
  const { data: _data, ...rest } = o;
  return rest;
}

function bucketRecord(b: BucketState): BucketRecord {
  return {
    name: b.name,
    timeCreated: b.timeCreated,
    updated: b.updated,
    metageneration: b.metageneration,
    config: b.config,
  };
}

/** Keeps a store's state in `dir`. */
export class GcsPersistence {
  private readonly journal: Journal<Snapshot, Event>;
  private readonly blobs: string;
  /** Generations each object name's last journaled state refers to (their blobs must stay). */
  private readonly referenced = new Map<string, bigint[]>();

  constructor(
    readonly dir: string,
    private readonly store: GcsStore,
  ) {
    this.journal = new Journal(dir);
    this.blobs = join(dir, 'blobs');
    mkdirSync(this.blobs, { recursive: true });
  }

  private blobPath(generation: bigint): string {
    return join(this.blobs, generation.toString());
  }

  private readObject(m: Meta): StoredObject {
    return { ...m, data: readFileSync(this.blobPath(m.generation)) };
  }

  private setObject(r: ObjectRecord): void {
    const b = this.store.buckets.get(r.bucket);
    if (!b) return;
    if (r.live) b.objects.set(r.name, this.readObject(r.live));
    else b.objects.delete(r.name);
    if (r.noncurrent.length)
      b.noncurrent.set(
        r.name,
        r.noncurrent.map((m) => this.readObject(m)),
      );
    else b.noncurrent.delete(r.name);
    for (const m of [...(r.live ? [r.live] : []), ...r.noncurrent]) this.store.noteGeneration(m.generation);
  }

  private setBucket(r: BucketRecord): void {
    const existing = this.store.buckets.get(r.name);
    this.store.buckets.set(r.name, {
      ...r,
      objects: existing?.objects ?? new Map(),
      noncurrent: existing?.noncurrent ?? new Map(),
    });
  }

  /** Loads the state, then compacts it into a fresh snapshot and removes blobs nothing refers to. */
  load(): void {
    const { snapshot, events } = this.journal.load();
    // Only each entity's last state matters (and only its blobs still exist): fold first, then read bytes.
    const buckets = new Map<string, BucketRecord>();
    const objects = new Map<string, ObjectRecord>();
    for (const b of snapshot?.buckets ?? []) buckets.set(b.name, b);
    for (const o of snapshot?.objects ?? []) objects.set(`${o.bucket}/${o.name}`, o);
    for (const e of events) {
      if (e.k === 'bucket') buckets.set(e.b.name, e.b);
      else if (e.k === 'object') objects.set(`${e.o.bucket}/${e.o.name}`, e.o);
      else {
        buckets.delete(e.name);
        for (const [key, o] of objects) if (o.bucket === e.name) objects.delete(key);
      }
    }
    for (const b of buckets.values()) this.setBucket(b);
    for (const o of objects.values()) this.setObject(o);
    const snap = this.snapshot();
    this.journal.compact(snap);
    for (const o of snap.objects)
      this.referenced.set(
        `${o.bucket}/${o.name}`,
        [...(o.live ? [o.live] : []), ...o.noncurrent].map((m) => m.generation),
      );
    const used = new Set(
      snap.objects
        .flatMap((o) => [...(o.live ? [o.live] : []), ...o.noncurrent])
        .map((m) => m.generation.toString()),
    );
    for (const f of readdirSync(this.blobs)) if (!used.has(f)) rmSync(join(this.blobs, f), { force: true });
  }

  private objectRecord(b: BucketState, name: string): ObjectRecord {
    const live = b.objects.get(name);
    return {
      bucket: b.name,
      name,
      live: live ? meta(live) : undefined,
      noncurrent: (b.noncurrent.get(name) ?? []).map(meta),
    };
  }

  private snapshot(): Snapshot {
    const buckets = [...this.store.buckets.values()];
    const names = (b: BucketState) => new Set([...b.objects.keys(), ...b.noncurrent.keys()]);
    return {
      buckets: buckets.map(bucketRecord),
      objects: buckets.flatMap((b) => [...names(b)].map((n) => this.objectRecord(b, n))),
    };
  }

  /** Journals one change (the store calls this after applying it). */
  record(change: StoreChange): void {
    if (change.kind === 'bucketDeleted') {
      this.journal.append({ k: 'bucketDeleted', name: change.bucket });
      return;
    }
    const b = this.store.buckets.get(change.bucket);
    if (!b) return;
    if (change.kind === 'bucket') {
      this.journal.append({ k: 'bucket', b: bucketRecord(b) });
      return;
    }
    const live = b.objects.get(change.name);
    const versions = [...(live ? [live] : []), ...(b.noncurrent.get(change.name) ?? [])];
    for (const o of versions) {
      const path = this.blobPath(o.generation);
      if (existsSync(path)) continue;
      writeFileSync(`${path}.tmp`, o.data);
      renameSync(`${path}.tmp`, path);
    }
    this.journal.append({ k: 'object', o: this.objectRecord(b, change.name) });
    // Only once the journal no longer refers to a version may its bytes go.
    const key = `${b.name}/${change.name}`;
    const now = versions.map((o) => o.generation);
    for (const g of this.referenced.get(key) ?? [])
      if (!now.includes(g)) rmSync(this.blobPath(g), { force: true });
    this.referenced.set(key, now);
  }

  /** Flushes and closes the journal. */
  close(): void {
    this.journal.close();
  }
}
