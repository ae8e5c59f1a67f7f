/**
 * The stream's dead letters in the ledger bucket (ADR-1503): written create-only by the reader (the same
 * records give the same name, so a re-read window finds its letter there), listed from metadata for the
 * status and the operator routes, and marked replayed by compare-and-swap.
 */
import { recordKey } from '../../domain/bad-records';
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
import { sealed } from '../../domain/dead-letter-seal';
import { formatTimestamp } from '../../domain/timestamp';
import { defaultWriterDeadLetterPrefix } from '../../domain/writer/config';
import { listPage, type ObjectStore } from '../../ports/object-store';
import { DEFAULT_RETRY, type RetryPolicy, withRetries } from '../common';
import { newWriterToken, type Versioned } from './versioned';
import { WriterDeadLetterStore } from './writer-dead-letters';

/** Counts over every dead letter (or the first `scanned` when the listing was cut short). */
export interface DeadLetterCounts {
  /** Dead letters neither replayed nor discarded (the writer's included), and the records the stream's hold. */
  pending: number;
  pendingRecords: number;
  replayed: number;
  /** Stream letters discarded by an operator (kept, never replayed, not pending). */
  discarded: number;
  /** The writer's letters (ADR-2203): `pending` above counts its pending ones too. */
  writer: { pending: number; discarded: number };
  /** Pending records per source table. */
  byTable: Record<string, number>;
  /** Pending records per reason (`<kind>:<error name>`). */
  byReason: Record<string, number>;
  /** True when there were more than the listing bound: the counts are lower bounds. */
  truncated: boolean;
}

/**
 * What an operator needs to find a dead letter's row, derived from the record it stores (its first, for a
 * letter of several): the source key as JSON, the column the failure names (when it names one), the commit
 * timestamp (RFC 3339, nine digits) and the error's message.
 */
export interface DeadLetterDetail {
  key: string;
  column?: string;
  commitTimestamp: string;
  message: string;
}

/** A page of dead letters (with each one's {@link DeadLetterDetail} when asked for). */
export interface DeadLetterPage {
  items: Array<DeadLetterSummary & Partial<DeadLetterDetail>>;
  nextPageToken?: string;
}

/** List calls a count makes at most (1,000 objects each). */
const MAX_COUNT_CALLS = 10;

const JSON_TYPE = 'application/json';

/** Zero counts. */
export function noDeadLetters(): DeadLetterCounts {
  return {
    pending: 0,
    pendingRecords: 0,
    replayed: 0,
    discarded: 0,
    writer: { pending: 0, discarded: 0 },
    byTable: {},
    byReason: {},
    truncated: false,
  };
}

function add(counts: DeadLetterCounts, s: DeadLetterSummary): void {
  if (s.state === 'replayed' || s.state === 'discarded') {
    counts[s.state]++;
    return;
  }
  counts.pending++;
  counts.pendingRecords += s.records;
  counts.byTable[s.table] = (counts.byTable[s.table] ?? 0) + s.records;
  counts.byReason[s.reason] = (counts.byReason[s.reason] ?? 0) + s.records;
}

/** How a {@link DeadLetterStore} retries, seals and finds the writer's letters. */
export interface DeadLetterStoreOptions {
  retry?: RetryPolicy;
  sealKey?: Buffer;
  writerPrefix?: string;
}

/** The dead letters of one pipeline. */
export class DeadLetterStore {
  private readonly prefix: string;
  /** The writer's letters, in the ledger bucket under its prefix (ADR-2203). */
  readonly writer: WriterDeadLetterStore;

  private readonly retry: RetryPolicy;
  /** Seals every letter written (ADR-2305); absent: letters are written unsigned. */
  private readonly sealKey: Buffer | undefined;

  /**
   * `options.sealKey` seals every letter written (ADR-2305); `options.writerPrefix` is the writer's
   * `SLUICE_WRITER_DEAD_LETTER_PREFIX` (its default when absent, ADR-2203).
   */
  constructor(
    private readonly store: ObjectStore,
    private readonly pipeline: string,
    options: DeadLetterStoreOptions = {},
  ) {
    this.retry = options.retry ?? DEFAULT_RETRY;
    this.sealKey = options.sealKey;
    this.prefix = deadLetterPrefix(pipeline);
    const writer = options.writerPrefix || defaultWriterDeadLetterPrefix(pipeline);
    this.writer = new WriterDeadLetterStore(store, writer, this.retry);
  }

  private call<T>(what: string, op: () => Promise<T>): Promise<T> {
    return withRetries(what, op, this.retry);
  }

  /** Writes a new dead letter, sealed with the key; `exists` when one of the same records is there already. */
  async put(unsealed: DeadLetter): Promise<'created' | 'exists'> {
    const letter = sealed(unsealed, this.sealKey);
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

  /**
   * One page of dead letters in name order (table, then time), from metadata only; `details` also reads each
   * letter for its record's key, column, commit timestamp and message (one read per letter).
   */
  async page(
    options: { pageToken?: string; pageSize?: number; details?: boolean } = {},
  ): Promise<DeadLetterPage> {
    const page = await this.call(`list ${this.prefix}`, () => listPage(this.store, this.prefix, options));
    const items: DeadLetterSummary[] = [];
    for (const info of page.items) {
      const id = deadLetterIdOf(this.pipeline, info.name);
      const summary = id ? summaryOf(id, info.metadata, info.updated) : undefined;
      if (summary) items.push(summary);
    }
    if (options.details)
      return {
        items: await this.detailed(items),
        ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
      };
    return { items, ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}) };
  }

  private async detailed(items: DeadLetterSummary[]): Promise<DeadLetterPage['items']> {
    const out: DeadLetterPage['items'] = [];
    for (const item of items) {
      const letter = await this.read(item.id);
      const detail = letter ? detailOf(letter.value) : undefined;
      out.push(detail ? { ...item, ...detail } : item);
    }
    return out;
  }

  /** Counts every dead letter, the writer's too, in at most {@link MAX_COUNT_CALLS} list calls of each. */
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
    const writer = await this.writer.counts(MAX_COUNT_CALLS);
    counts.writer = { pending: writer.pending, discarded: writer.discarded };
    counts.pending += writer.pending;
    counts.truncated = pageToken !== undefined || writer.truncated;
    return { ...counts, calls: calls + writer.calls };
  }
}

/** The {@link DeadLetterDetail} of a letter's first record; undefined for a letter holding none. */
export function detailOf(letter: DeadLetter): DeadLetterDetail | undefined {
  const first = letter.records[0];
  if (!first) return undefined;
  return {
    key: recordKey(first.record),
    ...(first.error.column ? { column: first.error.column } : {}),
    commitTimestamp: formatTimestamp(first.record.commitTimestamp),
    message: first.error.message.slice(0, 500),
  };
}
