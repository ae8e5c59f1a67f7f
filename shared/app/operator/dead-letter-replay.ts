/**
 * Replaying stream dead letters (`POST /dead-letters/replay`, ADR-1503): after the cause is fixed (a schema
 * change, a corrected value …) each pending letter's records are written to the replica again under the
 * `fail` policy and the letter is marked `replayed` by compare-and-swap. Only the replica is written: the
 * records' history rows went in with their window, so a replay never adds history. A letter already
 * replayed is skipped, and so is one discarded (ADR-2202); one whose records still fail stays pending with the
 * attempt and its error recorded. A letter whose seal does not prove the reader wrote it is `untrusted`: never
 * applied, never changed (ADR-2305).
 */
import { type DeadLetter, withReplay } from '../../domain/dead-letter';
import { checkSeal, type SealSettings } from '../../domain/dead-letter-seal';
import { SluiceError } from '../../domain/errors';
import type { Logger } from '../../domain/log';
import type { Timestamp } from '../../domain/timestamp';
import type { Enrichments } from '../enrichment';
import type { DeadLetterStore } from '../ledger';
import { followSchema, type ReplicaPorts, writeReplicaTable } from '../sinks';

/** What a replay needs. */
export interface ReplayDeps extends ReplicaPorts {
  deadLetters: DeadLetterStore;
  /** The key letters are checked with, and whether unsigned ones are trusted (ADR-2305). */
  seal: SealSettings;
  now: () => Timestamp;
  log: Logger;
  /** Applies the table's lookups (at each record's commit timestamp, as its window would have). */
  enrichments?: Enrichments;
}

/** Writes one letter's records to its table's replica; the rows written. */
async function apply(deps: ReplayDeps, letter: DeadLetter): Promise<number> {
  const records = letter.records.map((r) => r.record);
  const first = await deps.tables.table(letter.table, records[0]!.commitTimestamp);
  if (!first?.targets.replica)
    throw new SluiceError('permanent', `table ${letter.table} has no replica in the configuration`);
  const table = await followSchema(deps.tables, first, records);
  const enriched = deps.enrichments ? await deps.enrichments.forRecords(table, records) : undefined;
  return (await writeReplicaTable(deps, table, records, 'fail', deps.log, enriched)).rows;
}

/** One letter's outcome. */
export interface LetterReplay {
  id: string;
  outcome: 'replayed' | 'already-replayed' | 'discarded' | 'failed' | 'not-found' | 'untrusted';
  rows?: number;
  error?: string;
}

/** Letters replayed per request at most (the rest: call again with the page token). */
export const MAX_REPLAY = 100;

async function replayOne(deps: ReplayDeps, id: string): Promise<LetterReplay> {
  // A lost compare-and-swap means another replay (or this one's retry) wrote it: read again and decide.
  for (let attempt = 0; attempt < 3; attempt++) {
    const found = await deps.deadLetters.read(id);
    if (!found) return { id, outcome: 'not-found' };
    const letter = found.value;
    const trust = checkSeal(letter, deps.seal);
    if (!trust.trusted) {
      deps.log.warn('dead-letter.untrusted', { deadLetter: id, table: letter.table, reason: trust.reason });
      return { id, outcome: 'untrusted', error: trust.reason };
    }
    if (trust.unsigned)
      deps.log.warn('dead-letter.unsigned-trusted', { deadLetter: id, table: letter.table });
    if (letter.state === 'replayed') return { id, outcome: 'already-replayed' };
    // An operator set it aside for good (ADR-2202): applying it now would undo the later changes.
    if (letter.state === 'discarded') return { id, outcome: 'discarded' };
    let rows = 0;
    let error: string | undefined;
    try {
      rows = await apply(deps, letter);
    } catch (err) {
      const e = SluiceError.from(err, `replay of ${id}`);
      if (e.kind === 'retryable') throw e;
      error = e.message;
    }
    const next = withReplay(letter, { at: deps.now(), ok: !error, ...(error ? { message: error } : {}) });
    if (!(await deps.deadLetters.update(next, found.generation))) continue;
    if (error) return { id, outcome: 'failed', error };
    deps.log.notice('dead-letter.replayed', { deadLetter: id, table: letter.table, rows });
    return { id, outcome: 'replayed', rows };
  }
  throw new SluiceError('conflict', `dead letter ${id} kept changing while it was replayed`);
}

/**
 * Replays the letters named, or every pending letter (of `table` when given) after the id `after` in name
 * order, at most {@link MAX_REPLAY} per call. `next` (with `more`): the id to pass as `after` to go on, so
 * letters that still fail never keep the later ones from being tried (ADR-2112).
 * @throws SluiceError (retryable) when a service failed: the caller may simply call again.
 */
export async function replayDeadLetters(
  deps: ReplayDeps,
  request: { ids?: string[]; table?: string; after?: string },
): Promise<{ results: LetterReplay[]; more: boolean; next?: string }> {
  let ids = request.ids;
  let more = false;
  if (!ids) {
    const pending = await pendingAfter(deps, request);
    more = pending.more;
    ids = pending.ids;
  }
  const results: LetterReplay[] = [];
  for (const id of ids) results.push(await replayOne(deps, id));
  return { results, more, ...(more ? { next: ids.at(-1)! } : {}) };
}

/** The first {@link MAX_REPLAY} pending letters after `after` (ids in name order), and whether more follow. */
async function pendingAfter(
  deps: ReplayDeps,
  request: { table?: string; after?: string },
): Promise<{ ids: string[]; more: boolean }> {
  const ids: string[] = [];
  let pageToken: string | undefined;
  do {
    const page = await deps.deadLetters.page({ ...(pageToken ? { pageToken } : {}), pageSize: 1000 });
    for (const s of page.items)
      if (s.state === 'pending' && (!request.table || s.table === request.table))
        if (!request.after || s.id > request.after) ids.push(s.id);
    pageToken = page.nextPageToken;
  } while (pageToken && ids.length <= MAX_REPLAY);
  return { ids: ids.slice(0, MAX_REPLAY), more: ids.length > MAX_REPLAY || pageToken !== undefined };
}
