/**
 * Dead letters: the mutations routed to the failure handler, one JSON object per request in the dead-letter
 * bucket, each entry with the mutation as the producer sent it, the status Spanner gave and why it was
 * routed — enough to inspect, fix and replay it.
 */

import { formatTimestamp, type Timestamp } from '../timestamp';
import type { GroupStatus } from './policy';
import { codeName } from './policy';
import type { MutationInput, PubSubOrigin } from './request';

/** One routed mutation. */
export interface DeadLetterEntry {
  mutation: MutationInput;
  status: GroupStatus;
  reason: string;
  attempts: number;
  /** The row's key as JSON (what an operator looks the row up by). */
  key?: string;
}

/** Where the request came from. */
export interface DeadLetterOrigin {
  requestId: string;
  receivedAt: Timestamp;
  pubsub?: PubSubOrigin;
}

/** `<prefix>YYYY/MM/DD/HHMMSS.nnnnnnnnnZ-<request id>.json`: sorted by time when listed. */
export function deadLetterName(prefix: string, origin: DeadLetterOrigin): string {
  const text = formatTimestamp(origin.receivedAt);
  const [day, time] = text.split('T') as [string, string];
  return `${prefix}${day.replaceAll('-', '/')}/${time.replaceAll(':', '')}-${origin.requestId}.json`;
}

/** The object's content. */
export function deadLetterDocument(origin: DeadLetterOrigin, entries: DeadLetterEntry[]): Buffer {
  const doc = {
    kind: 'sluice.writer.dead-letter',
    requestId: origin.requestId,
    receivedAt: formatTimestamp(origin.receivedAt),
    ...(origin.pubsub ? { pubsub: origin.pubsub } : {}),
    entries: entries.map((e) => {
      const { index, ...mutation } = e.mutation;
      return {
        index,
        mutation,
        status: { code: e.status.code, name: codeName(e.status.code), message: e.status.message },
        reason: e.reason,
        attempts: e.attempts,
        ...(e.key ? { key: e.key } : {}),
      };
    }),
  };
  return Buffer.from(`${JSON.stringify(doc, null, 2)}\n`);
}
