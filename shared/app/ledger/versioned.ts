/** What every compare-and-swap write of the ledger bucket carries: the generation read, and a writer token. */
import { randomUUID } from 'node:crypto';

/** A value read from the ledger with the generation a compare-and-swap write must name. */
export interface Versioned<T> {
  value: T;
  generation: string;
}

/** A fresh writer token: unique per write, so a 412 can be told apart from our own retried success. */
export function newWriterToken(prefix = 'w'): string {
  return `${prefix}-${randomUUID()}`;
}
