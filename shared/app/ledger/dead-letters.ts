/**
 * The stream's dead letters in the ledger bucket (ADR-1503): written create-only by the reader (the same
 * records give the same name, so a re-read window finds its letter there), listed from metadata for the
 * status and the operator routes, and marked replayed by compare-and-swap.
 */
import {
  type DeadLetter,
  type DeadLetterSummary,
  deadLetterIdOf,
  deadLetterMetadata,
  deadLetterObject,
  deadLetterPrefix,
  parseDeadLetter,
  serializeDeadLetter,
  summaryOf,
} from '../../domain/dead-letter';
import type { ObjectStore } from '../../ports/object-store';
import { DEFAULT_RETRY, type RetryPolicy, withRetries } from '../common';
import { newWriterToken, type Versioned } from './versioned';

/** Counts over every dead letter (or the first `scanned` when the listing was cut short). */
export interface DeadLetterCounts {
  /** Dead letters not yet replayed, and the records they hold. */
  pending: number;
  pendingRecords: number;
  replayed: number;
  /** Pending records per source table. */
  byTable: Record<string, number>;
  /** Pending records per reason (`<kind>:<error name>`). */
  byReason: Record<string, number>;
  /** True when there were more than the listing bound: the counts are lower bounds. */
  truncated: boolean;
}

/** A page of dead letters. */
export interface DeadLetterPage {
  items: DeadLetterSummary[];
  nextPageToken?: string;
}

/** List calls a count makes at most (1,000 objects each). */
const MAX_COUNT_CALLS = 10;

const JSON_TYPE = 'application/json';

/** Zero counts. */
export function noDeadLetters(): DeadLetterCounts {
  return { pending: 0, pendingRecords: 0, replayed: 0, byTable: {}, byReason: {}, truncated: false };
}

function add(counts: DeadLetterCounts, s: DeadLetterSummary): void {
  if (s.state === 'replayed') {
    counts.replayed++;
    return;
  }
  counts.pending++;
  counts.pendingRecords += s.records;
  counts.byTable[s.table] = (counts.byTable[s.table] ?? 0) + s.records;
  counts.byReason[s.reason] = (counts.byReason[s.reason] ?? 0) + s.records;
}

/** The dead letters of one pipeline. */
export class DeadLetterStore {
  private readonly prefix: string;

  constructor(
    private readonly store: ObjectStore,
    private readonly pipeline: string,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {
    this.prefix = deadLetterPrefix(pipeline);
  }

  private call<T>(what: string, op: () => Promise<T>): Promise<T> {
    return withRetries(what, op, this.retry);
  }

  /** Writes a new dead letter; `exists` when one of the same records is there already. */
  async put(letter: DeadLetter): Promise<'created' | 'exists'> {
    const name = deadLetterObject(this.pipeline, letter.id);
    const token = newWriterToken('dead-letter');
    const out = await this.call(`write ${name}`, () =>
      this.store.write(name, serializeDeadLetter(letter), {
        ifGeneration: 0,
        metadata: deadLetterMetadata(letter),
        contentType: JSON_TYPE,
        writerToken: token,
      }),
    );
    return out.ok ? 'created' : 'exists';
  }

  /** Reads one dead letter, or undefined when there is none of that id. */
  async read(id: string): Promise<Versioned<DeadLetter> | undefined> {
    const name = deadLetterObject(this.pipeline, id);
    const obj = await this.call(`read ${name}`, () => this.store.read(name));
    if (!obj) return undefined;
    return { value: parseDeadLetter(obj.data.toString('utf8'), name), generation: obj.generation };
  }

  /** Replaces a dead letter if it still has `generation`; false when another writer changed it first. */
  async update(letter: DeadLetter, generation: string): Promise<boolean> {
    const name = deadLetterObject(this.pipeline, letter.id);
    const token = newWriterToken('dead-letter');
    const out = await this.call(`write ${name}`, () =>
      this.store.write(name, serializeDeadLetter(letter), {
        ifGeneration: generation,
        metadata: deadLetterMetadata(letter),
        contentType: JSON_TYPE,
        writerToken: token,
      }),
    );
    return out.ok;
  }

  /** One page of dead letters in name order (table, then time), from metadata only. */
  async page(options: { pageToken?: string; pageSize?: number } = {}): Promise<DeadLetterPage> {
    const page = await this.call(`list ${this.prefix}`, () =>
      this.store.list(this.prefix, {
        ...(options.pageToken ? { pageToken: options.pageToken } : {}),
        maxResults: options.pageSize ?? 100,
      }),
    );
    const items: DeadLetterSummary[] = [];
    for (const info of page.items) {
      const id = deadLetterIdOf(this.pipeline, info.name);
      const summary = id ? summaryOf(id, info.metadata, info.updated) : undefined;
      if (summary) items.push(summary);
    }
    return { items, ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}) };
  }

  /** Counts every dead letter, in at most {@link MAX_COUNT_CALLS} list calls. */
  async counts(): Promise<DeadLetterCounts & { calls: number }> {
    const counts = noDeadLetters();
    let pageToken: string | undefined;
    let calls = 0;
    do {
      const page = await this.page({ ...(pageToken ? { pageToken } : {}), pageSize: 1000 });
      calls++;
      for (const s of page.items) add(counts, s);
      pageToken = page.nextPageToken;
    } while (pageToken && calls < MAX_COUNT_CALLS);
    counts.truncated = pageToken !== undefined;
    return { ...counts, calls };
  }
}
