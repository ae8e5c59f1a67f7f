/**
 * `GET /dead-letters` as one listing of both kinds of letter (ADR-2203): the stream's first (name order:
 * table, then time), then the writer's (time order). The page token says which listing goes on: `w:` +
 * the writer listing's token, or the stream listing's token as it was (`s:` + token, or a bare token from an
 * earlier version). A page that ends the stream's letters is filled with the writer's first ones.
 */
import type { DeadLetterSummary } from '../../domain/dead-letter';
import type { WriterLetterView } from '../../domain/writer/dead-letter-view';
import type { DeadLetterDetail, DeadLetterStore } from './dead-letters';

/** A stream letter as listed: its summary, the detail of its first record, and `source: stream`. */
export type ListedStreamLetter = DeadLetterSummary & Partial<DeadLetterDetail> & { source: 'stream' };

/** One listed letter of either source. */
export type ListedLetter = ListedStreamLetter | WriterLetterView;

/** A page of the listing. */
export interface DeadLetterListing {
  items: ListedLetter[];
  nextPageToken?: string;
}

const WRITER_TOKEN = 'w:';
const STREAM_TOKEN = 's:';

/** One page of every dead letter, each read for what finds its row. */
export async function listDeadLetters(
  letters: DeadLetterStore,
  options: { pageToken?: string; pageSize: number },
): Promise<DeadLetterListing> {
  const token = options.pageToken ?? '';
  if (token.startsWith(WRITER_TOKEN))
    return writerPage(letters, token.slice(WRITER_TOKEN.length), options.pageSize);
  const streamToken = token.startsWith(STREAM_TOKEN) ? token.slice(STREAM_TOKEN.length) : token;
  const page = await letters.page({
    ...(streamToken ? { pageToken: streamToken } : {}),
    pageSize: options.pageSize,
    details: true,
  });
  const items: ListedLetter[] = page.items.map((i) => ({ ...i, source: 'stream' as const }));
  if (page.nextPageToken) return { items, nextPageToken: `${STREAM_TOKEN}${page.nextPageToken}` };
  if (items.length >= options.pageSize) return { items, nextPageToken: WRITER_TOKEN };
  const writer = await writerPage(letters, '', options.pageSize - items.length);
  return { ...writer, items: [...items, ...writer.items] };
}

async function writerPage(
  letters: DeadLetterStore,
  token: string,
  pageSize: number,
): Promise<DeadLetterListing> {
  const page = await letters.writer.page({ ...(token ? { pageToken: token } : {}), pageSize });
  return {
    items: page.items,
    ...(page.nextPageToken ? { nextPageToken: `${WRITER_TOKEN}${page.nextPageToken}` } : {}),
  };
}
