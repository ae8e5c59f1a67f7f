/**
 * The writer's dead letters, read by the operator function and the scheduler (ADR-2203): the writer creates
 * them under its prefix in the ledger bucket (`writer-dead-letters/<pipeline>/` unless configured), with no
 * metadata; this lists them, reads each for its table, key and origin, counts the pending ones for the
 * status, and discards one by compare-and-swap (the writer's create-only grant never lets it change one).
 */

import type { Discard } from '../../domain/dead-letter-discard';
import { SluiceError } from '../../domain/errors';
import {
  discardWriterLetter,
  viewWriterLetter,
  WRITER_NOT_REPLAYABLE,
  type WriterLetterView,
  writerLetterId,
  writerLetterObject,
  writerLetterState,
} from '../../domain/writer/dead-letter-view';
import { listPage, type ObjectStore } from '../../ports/object-store';
import { DEFAULT_RETRY, type RetryPolicy, withRetries } from '../common';
import { newWriterToken } from './versioned';

/** A writer letter read whole, with its generation (for the compare-and-swap of a discard). */
export interface ReadWriterLetter {
  view: WriterLetterView;
  text: string;
  generation: string;
}

/** A page of writer letters. */
export interface WriterLetterPage {
  items: WriterLetterView[];
  nextPageToken?: string;
}

/** The writer's dead letters of one pipeline. */
export class WriterDeadLetterStore {
  constructor(
    private readonly store: ObjectStore,
    readonly prefix: string,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {}

  private call<T>(what: string, op: () => Promise<T>): Promise<T> {
    return withRetries(what, op, this.retry);
  }

  /** One page in name order (time), each letter read for its view; an unreadable one is listed as such. */
  async page(options: { pageToken?: string; pageSize?: number } = {}): Promise<WriterLetterPage> {
    const page = await this.call(`list ${this.prefix}`, () => listPage(this.store, this.prefix, options));
    const items: WriterLetterView[] = [];
    for (const info of page.items) {
      const id = writerLetterId(this.prefix, info.name);
      if (!id) continue;
      const read = await this.read(id).catch((err: unknown) => unreadable(id, info.updated, err));
      if (read) items.push('view' in read ? read.view : read);
    }
    return { items, ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}) };
  }

  /** Reads one letter, or undefined when there is none of that id. */
  async read(id: string): Promise<ReadWriterLetter | undefined> {
    const name = writerLetterObject(this.prefix, id);
    const obj = await this.call(`read ${name}`, () => this.store.read(name));
    if (!obj) return undefined;
    const text = obj.data.toString('utf8');
    return { view: viewWriterLetter(id, text, obj.updated), text, generation: obj.generation };
  }

  /** Marks a letter read at `generation` discarded; false when another writer changed it first. */
  async discard(letter: ReadWriterLetter, discard: Discard): Promise<boolean> {
    const name = writerLetterObject(this.prefix, letter.view.id);
    const next = discardWriterLetter(letter.view.id, letter.text, discard);
    const token = newWriterToken('dead-letter');
    const out = await this.call(`write ${name}`, () =>
      this.store.write(name, next.data, {
        ifGeneration: letter.generation,
        metadata: next.metadata,
        contentType: 'application/json',
        writerToken: token,
      }),
    );
    return out.ok;
  }

  /** Counts from metadata only (the writer sets none: a letter without a discard is pending). */
  async counts(
    maxCalls: number,
  ): Promise<{ pending: number; discarded: number; calls: number; truncated: boolean }> {
    let pending = 0;
    let discarded = 0;
    let pageToken: string | undefined;
    let calls = 0;
    do {
      const page = await this.call(`list ${this.prefix}`, () =>
        this.store.list(this.prefix, { ...(pageToken ? { pageToken } : {}), maxResults: 1000 }),
      );
      calls++;
      for (const info of page.items) {
        if (!writerLetterId(this.prefix, info.name)) continue;
        if (writerLetterState(info.metadata) === 'discarded') discarded++;
        else pending++;
      }
      pageToken = page.nextPageToken;
    } while (pageToken && calls < maxCalls);
    return { pending, discarded, calls, truncated: pageToken !== undefined };
  }
}

/** A letter whose content is not a writer letter's: listed (never dropped) with what is wrong. */
function unreadable(id: string, updated: string, err: unknown): WriterLetterView {
  if (err instanceof SluiceError && err.kind === 'retryable') throw err;
  return {
    id,
    source: 'writer',
    origin: `request ${id.slice(id.lastIndexOf('Z-') + 2)}`,
    state: 'pending',
    table: '-',
    tables: [],
    records: 0,
    reason: 'writer:unreadable',
    message: err instanceof Error ? err.message : String(err),
    receivedAt: '',
    updated,
    replayable: false,
    note: WRITER_NOT_REPLAYABLE,
  };
}
