/**
 * The writer's dead letters as the operator sees them (ADR-2203): each object under the writer's dead-letter
 * prefix (one per request, see dead-letter.ts) is listed beside the stream's letters with `source: writer`,
 * its origin (the writer's request id, or the Pub/Sub message id of a push), table and key. They hold Spanner
 * mutations, not change records: they are never replayed into BigQuery. An operator who has dealt with one
 * (posted its mutations again, or found the row right) discards it; the discard is kept in the object itself.
 */
import { z } from 'zod';
import { type Discard, discardMetadata, discardOf } from '../dead-letter-discard';
import { SluiceError } from '../errors';
import { formatTimestamp } from '../timestamp';

/** What a listing says of a writer letter's replay. */
export const WRITER_NOT_REPLAYABLE =
  'holds Spanner mutations, not change records: it cannot be replayed into BigQuery; post its mutations to the writer again if they are still wanted, then discard it';

/** `writer/<YYYY>/<MM>/<DD>/<HHMMSS>.<nanos>Z-<request id>`: the object's name below the prefix, marked. */
const WRITER_LETTER_ID = /^writer\/\d{4}\/\d\d\/\d\d\/\d{6}\.\d{9}Z-[A-Za-z0-9._-]{1,100}$/;

/** True for a well-formed writer dead-letter id. */
export function isWriterLetterId(id: string): boolean {
  return WRITER_LETTER_ID.test(id);
}

/** The id of the writer letter stored as `name` under `prefix`; undefined when the name is not one. */
export function writerLetterId(prefix: string, name: string): string | undefined {
  if (!name.startsWith(prefix) || !name.endsWith('.json')) return undefined;
  const id = `writer/${name.slice(prefix.length, -'.json'.length)}`;
  return isWriterLetterId(id) ? id : undefined;
}

/** The object name of a writer letter. */
export function writerLetterObject(prefix: string, id: string): string {
  return `${prefix}${id.slice('writer/'.length)}.json`;
}

const doc = z.looseObject({
  kind: z.literal('sluice.writer.dead-letter'),
  requestId: z.string(),
  receivedAt: z.string(),
  pubsub: z.looseObject({ messageId: z.string() }).optional(),
  entries: z
    .array(
      z.looseObject({
        mutation: z.looseObject({ op: z.string(), table: z.string(), key: z.array(z.unknown()).optional() }),
        status: z.looseObject({ code: z.number(), name: z.string().optional(), message: z.string() }),
        reason: z.string(),
        key: z.string().optional(),
      }),
    )
    .min(1),
  discarded: z.looseObject({ by: z.string(), at: z.string(), reason: z.string().optional() }).optional(),
});

type WriterLetterDoc = z.infer<typeof doc>;

/** A writer letter as `GET /dead-letters` lists it. */
export interface WriterLetterView {
  id: string;
  source: 'writer';
  /** `request <id>` or `pubsub <message id>`. */
  origin: string;
  state: 'pending' | 'discarded';
  /** The first mutation's table (`tables` names all of them). */
  table: string;
  tables: string[];
  key?: string;
  records: number;
  reason: string;
  message: string;
  receivedAt: string;
  updated: string;
  replayable: false;
  note: string;
  discardedBy?: string;
  discardedAt?: string;
  discardReason?: string;
}

function parse(text: string, id: string): WriterLetterDoc {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new SluiceError('permanent', `writer dead letter ${id} is not JSON: ${(err as Error).message}`);
  }
  const out = doc.safeParse(raw);
  if (!out.success)
    throw new SluiceError(
      'permanent',
      `writer dead letter ${id} is not one: ${out.error.issues[0]?.message}`,
    );
  return out.data;
}

/** The listing's view of a writer letter's content. @throws SluiceError (`permanent`) when it is not one. */
export function viewWriterLetter(id: string, text: string, updated: string): WriterLetterView {
  const d = parse(text, id);
  const first = d.entries[0]!;
  const deleteKey = first.mutation.key ? JSON.stringify(first.mutation.key) : undefined;
  const key = first.key ?? deleteKey;
  return {
    id,
    source: 'writer',
    origin: d.pubsub ? `pubsub ${d.pubsub.messageId}` : `request ${d.requestId}`,
    state: d.discarded ? 'discarded' : 'pending',
    table: first.mutation.table,
    tables: [...new Set(d.entries.map((e) => e.mutation.table))],
    ...(key ? { key } : {}),
    records: d.entries.length,
    reason: `writer:${first.status.name ?? `CODE_${first.status.code}`}`,
    message: first.status.message.slice(0, 500),
    receivedAt: d.receivedAt,
    updated,
    replayable: false,
    note: WRITER_NOT_REPLAYABLE,
    ...(d.discarded
      ? {
          discardedBy: d.discarded.by,
          discardedAt: d.discarded.at,
          ...(d.discarded.reason ? { discardReason: d.discarded.reason } : {}),
        }
      : {}),
  };
}

/** The letter's content and metadata once discarded (everything the writer wrote is kept as it was). */
export function discardWriterLetter(
  id: string,
  text: string,
  discard: Discard,
): { data: Buffer; metadata: Record<string, string> } {
  const d = parse(text, id);
  const discarded = {
    by: discard.by,
    at: formatTimestamp(discard.at),
    ...(discard.reason ? { reason: discard.reason } : {}),
  };
  return {
    data: Buffer.from(`${JSON.stringify({ ...d, discarded }, null, 2)}\n`),
    metadata: { 'sluice-state': 'discarded', ...discardMetadata(discard) },
  };
}

/** A listed writer letter's state from its metadata alone (the writer sets none: pending). */
export function writerLetterState(metadata: Record<string, string>): 'pending' | 'discarded' {
  return metadata['sluice-state'] === 'discarded' && discardOf(metadata).discardedBy
    ? 'discarded'
    : 'pending';
}
