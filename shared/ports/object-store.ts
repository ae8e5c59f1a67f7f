/**
 * Object store port: what the ledger needs from Cloud Storage, in the project's words.
 * Every write is compare-and-swap on the object's generation (DESIGN §4.3).
 */

/** Generation of a stored object (a decimal string, as GCS returns it), or 0 meaning "must not exist". */
export type Generation = string | 0;

/** An object's identity and custom metadata, as a listing returns it (no content). */
export interface ObjectInfo {
  name: string;
  generation: string;
  /** Custom metadata (string values), returned by listing so the scheduler need not read each object. */
  metadata: Record<string, string>;
  /** Last update, RFC 3339 (for operators; ordering uses generations). */
  updated: string;
  /** RFC 3339, when set: the bucket's lifecycle rules (e.g. expiry of finished backfill jobs) key on it. */
  customTime?: string;
}

/** An object with its content. */
export interface StoredObject extends ObjectInfo {
  data: Buffer;
}

/** Outcome of a conditional write or delete. */
export type WriteOutcome = { ok: true; generation: string } | { ok: false; reason: 'conflict' };

/** A page of a listing. */
export interface ObjectPage {
  items: ObjectInfo[];
  nextPageToken?: string;
}

/** Options of a conditional write. */
export interface WriteOptions {
  /** The generation the object must have now; 0 creates only if absent. */
  ifGeneration: Generation;
  metadata?: Record<string, string>;
  contentType?: string;
  /** RFC 3339 custom time (see {@link ObjectInfo.customTime}). */
  customTime?: string;
  /**
   * Identifies this write. A client library may retry a conditional write whose first attempt succeeded but
   * whose answer was lost; the retry then fails its precondition. The store reads the object back and, when it
   * carries this token, reports the write as the success it was (DESIGN §4.3).
   */
  writerToken?: string;
}

/** Metadata key under which a write's token is stored. */
export const WRITER_TOKEN_KEY = 'sluice-writer';

/** The operations the ledger uses. Implementations: in-memory, and Cloud Storage. */
export interface ObjectStore {
  /** Reads an object, or undefined when it does not exist. */
  read(name: string): Promise<StoredObject | undefined>;
  /** Writes when the precondition holds; a lost race is `{ok: false}`, never an exception. */
  write(name: string, data: Buffer, options: WriteOptions): Promise<WriteOutcome>;
  /** Deletes when the object still has `ifGeneration`. Deleting an absent object is a conflict. */
  delete(name: string, ifGeneration: string): Promise<WriteOutcome>;
  /** Lists objects under a prefix in name order, one page at a time (at most `maxResults`, ≤ 1000). */
  list(prefix: string, options?: { pageToken?: string; maxResults?: number }): Promise<ObjectPage>;
}

/** Lists every object under a prefix, following pages. Returns the items and how many list calls it took. */
export async function listAll(
  store: ObjectStore,
  prefix: string,
): Promise<{ items: ObjectInfo[]; calls: number }> {
  const items: ObjectInfo[] = [];
  let pageToken: string | undefined;
  let calls = 0;
  do {
    const page = await store.list(prefix, { pageToken, maxResults: 1000 });
    calls++;
    items.push(...page.items);
    pageToken = page.nextPageToken;
  } while (pageToken);
  return { items, calls };
}

/** One page of the objects under `prefix` for a listing that pages: from `pageToken`, `pageSize` (100) a page. */
export function listPage(
  store: ObjectStore,
  prefix: string,
  options: { pageToken?: string; pageSize?: number },
): Promise<ObjectPage> {
  return store.list(prefix, {
    ...(options.pageToken ? { pageToken: options.pageToken } : {}),
    maxResults: options.pageSize ?? 100,
  });
}
