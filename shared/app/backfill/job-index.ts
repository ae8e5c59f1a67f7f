/**
 * The index of backfill jobs (ADR-2308): one small object per job under `<pipeline>/backfill-index/`, named
 * newest first, rewritten when the job's state changes. `GET /backfills` lists one page of it and reads only
 * the jobs of that page, instead of listing every partition, marker and claim of every job kept (30 days).
 */
import { randomUUID } from 'node:crypto';
import { type BackfillJob, decodeJob, indexEntryId, jobObjects } from '../../domain/backfill/job';
import { isTerminal } from '../../domain/backfill/state';
import { SluiceError } from '../../domain/errors';
import type { ObjectStore } from '../../ports/object-store';

const MAX_CAS_ATTEMPTS = 8;
const TOKEN_PREFIX = 'sluice-backfills-1:';

/** The body of an index entry: enough to say what it points at, and which job write it reflects. */
interface IndexEntry {
  id: string;
  state: string;
  /** The generation of the job object this entry was written from: an older write never replaces it. */
  jobGeneration: string;
}

/** One page of the index: job ids, newest first, and the token of the next page. */
export interface JobIdPage {
  ids: string[];
  nextPageToken?: string;
}

/** Our page token around the store's (opaque to callers; refused when not one we gave). */
export function encodePageToken(storeToken: string): string {
  return Buffer.from(`${TOKEN_PREFIX}${storeToken}`).toString('base64url');
}

/** The store's page token inside ours, or undefined when `token` is not one {@link encodePageToken} made. */
export function decodePageToken(token: string): string | undefined {
  if (!/^[A-Za-z0-9_-]{1,4096}$/.test(token)) return undefined;
  const text = Buffer.from(token, 'base64url').toString('utf8');
  return text.startsWith(TOKEN_PREFIX) && text.length > TOKEN_PREFIX.length
    ? text.slice(TOKEN_PREFIX.length)
    : undefined;
}

/** GCS custom time of a finished job's entry: the bucket's lifecycle rule removes it with the job. */
function customTime(job: BackfillJob): string | undefined {
  if (!isTerminal(job.state) || job.finishedAt === null) return undefined;
  return new Date(Number(job.finishedAt / 1_000_000n)).toISOString();
}

/** Reads and writes the index of one pipeline's jobs. */
export class JobIndex {
  constructor(
    private readonly store: ObjectStore,
    private readonly pipeline: string,
  ) {}

  /**
   * Records the job as written at `jobGeneration` (compare-and-swap on the entry; an entry already written
   * from the same or a later job write is left alone, so concurrent updates cannot move it back).
   */
  async record(job: BackfillJob, jobGeneration: string): Promise<void> {
    const name = jobObjects.indexEntry(this.pipeline, job.id, job.createdAt);
    const entry: IndexEntry = { id: job.id, state: job.state, jobGeneration };
    const time = customTime(job);
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const current = await this.store.read(name);
      if (current && BigInt(parseEntry(current.data).jobGeneration) >= BigInt(jobGeneration)) return;
      const outcome = await this.store.write(name, Buffer.from(JSON.stringify(entry)), {
        ifGeneration: current?.generation ?? 0,
        metadata: { 'sluice-state': job.state },
        contentType: 'application/json',
        writerToken: randomUUID(),
        ...(time ? { customTime: time } : {}),
      });
      if (outcome.ok) return;
    }
    throw new SluiceError('retryable', `backfill index entry of ${job.id}: too many concurrent updates`);
  }

  /** One page of job ids, newest first; `pageToken` as {@link decodePageToken} returned it. */
  async page(pageSize: number, storeToken?: string): Promise<JobIdPage> {
    await this.ensureBuilt();
    const page = await this.store.list(jobObjects.indexPrefix(this.pipeline), {
      maxResults: pageSize,
      ...(storeToken ? { pageToken: storeToken } : {}),
    });
    const ids = page.items.flatMap((i) => indexEntryId(this.pipeline, i.name) ?? []);
    return { ids, ...(page.nextPageToken ? { nextPageToken: encodePageToken(page.nextPageToken) } : {}) };
  }

  /**
   * Indexes the jobs created before the index existed, once: a full listing of the jobs' objects, then a
   * marker so that no later call lists them again. Concurrent first calls both index; entries are
   * compare-and-swap, so the outcome is the same.
   */
  private async ensureBuilt(): Promise<void> {
    const marker = jobObjects.indexBuilt(this.pipeline);
    if (await this.store.read(marker)) return;
    const prefix = jobObjects.prefix(this.pipeline);
    let pageToken: string | undefined;
    do {
      const page = await this.store.list(prefix, { maxResults: 1000, ...(pageToken ? { pageToken } : {}) });
      for (const item of page.items.filter((i) => i.name.endsWith('/job.json'))) {
        const object = await this.store.read(item.name);
        if (object) await this.record(decodeJob(object.data), object.generation);
      }
      pageToken = page.nextPageToken;
    } while (pageToken);
    await this.store.write(marker, Buffer.from('{}'), { ifGeneration: 0, contentType: 'application/json' });
  }
}

function parseEntry(data: Buffer): IndexEntry {
  const parsed = JSON.parse(data.toString('utf8')) as Partial<IndexEntry>;
  if (typeof parsed.jobGeneration !== 'string' || !/^\d+$/.test(parsed.jobGeneration))
    throw new SluiceError('permanent', 'backfill index entry without a job generation');
  return parsed as IndexEntry;
}
