/**
 * `objects.list`: prefix, delimiter, matchGlob, versions, startOffset/endOffset, maxResults and page tokens. Items and prefixes
 * form one name-ordered sequence and `maxResults` counts both, as the real service does; the page token is
 * the last name (or prefix) returned, so a page boundary never repeats or skips an entry.
 */
import { z } from 'zod';
import { invalid } from './errors';
import { globToRegExp } from './glob';
import type { StoredObject } from './objects';

const MAX_PAGE = 1000;

const querySchema = z.object({
  prefix: z.string().default(''),
  delimiter: z.string().optional(),
  startOffset: z.string().optional(),
  endOffset: z.string().optional(),
  pageToken: z.string().optional(),
  maxResults: z.coerce.number().int().positive().optional(),
  includeTrailingDelimiter: z.enum(['true', 'false']).optional(),
  versions: z.enum(['true', 'false']).optional(),
  matchGlob: z.string().optional(),
});

/** Parsed listing parameters. */
export type ListQuery = z.infer<typeof querySchema>;

/** Reads the listing parameters from a query string. */
export function parseListQuery(query: URLSearchParams): ListQuery {
  const parsed = querySchema.safeParse(Object.fromEntries(query.entries()));
  if (!parsed.success) throw invalid(`Invalid list parameters: ${parsed.error.message}`);
  return parsed.data;
}

/** One page of a listing. */
export interface ListPage {
  items: StoredObject[];
  prefixes: string[];
  nextPageToken?: string;
}

type Entry = { key: string; item?: StoredObject; prefix?: string };

/** An item's position in the listing: its name, then (with versions) its generation. */
function itemKey(o: StoredObject): string {
  return `${o.name}\u0000${o.generation.toString().padStart(20, '0')}`;
}

function entries(sorted: StoredObject[], q: ListQuery): Entry[] {
  const out: Entry[] = [];
  const seen = new Set<string>();
  const glob = q.matchGlob ? globToRegExp(q.matchGlob) : undefined;
  for (const o of sorted) {
    if (!o.name.startsWith(q.prefix)) continue;
    if (glob && !glob.test(o.name)) continue;
    if (q.startOffset !== undefined && o.name < q.startOffset) continue;
    if (q.endOffset !== undefined && o.name >= q.endOffset) continue;
    const cut = q.delimiter ? o.name.indexOf(q.delimiter, q.prefix.length) : -1;
    if (cut < 0 || !q.delimiter) {
      out.push({ key: itemKey(o), item: o });
      continue;
    }
    const prefix = o.name.slice(0, cut + q.delimiter.length);
    if (q.includeTrailingDelimiter === 'true' && o.name === prefix) out.push({ key: itemKey(o), item: o });
    if (!seen.has(prefix)) {
      seen.add(prefix);
      out.push({ key: prefix, prefix });
    }
  }
  return out;
}

/** Cuts one page out of `sorted` (the bucket's objects, or every version, in listing order). */
export function listPage(sorted: StoredObject[], q: ListQuery): ListPage {
  const token = q.pageToken ? Buffer.from(q.pageToken, 'base64url').toString('utf8') : undefined;
  const all = entries(sorted, q).filter((e) => token === undefined || e.key > token);
  const size = Math.min(q.maxResults ?? MAX_PAGE, MAX_PAGE);
  const page = all.slice(0, size);
  const last = page[page.length - 1];
  return {
    items: page.flatMap((e) => (e.item ? [e.item] : [])),
    prefixes: page.flatMap((e) => (e.prefix ? [e.prefix] : [])),
    nextPageToken:
      all.length > size && last ? Buffer.from(last.key, 'utf8').toString('base64url') : undefined,
  };
}
