/**
 * Discarding dead letters (`POST /dead-letters/discard`, ADR-2202): a letter superseded by later changes (the
 * row is right now) is set aside for good. It is kept, in state `discarded`, with who discarded it, when and
 * why; a replay never applies it and the status no longer counts it pending. The stream's letters and the
 * writer's are discarded alike. Every named letter is checked before any is changed: an unknown id (404) or a
 * replayed letter (409) refuses the whole request, so a typo never leaves half of a list discarded.
 */
import { isDeadLetterId, withDiscard } from '../../domain/dead-letter';
import type { Discard } from '../../domain/dead-letter-discard';
import { SluiceError } from '../../domain/errors';
import type { Logger } from '../../domain/log';
import { formatTimestamp, type Timestamp } from '../../domain/timestamp';
import type { DeadLetterStore } from '../ledger';

/** What a discard needs. */
export interface DiscardDeps {
  deadLetters: DeadLetterStore;
  now: () => Timestamp;
  log: Logger;
}

/** The letters named, or every pending letter of `table`; `by` is the caller's identity. */
export interface DiscardRequest {
  ids?: string[];
  table?: string;
  reason?: string;
  by: string;
}

/** One letter's outcome. */
export interface LetterDiscard {
  id: string;
  source: 'stream' | 'writer';
  outcome: 'discarded' | 'already-discarded';
}

/** A discard the request may not make: `status` 404 (unknown ids) or 409 (replayed letters). */
export class DiscardRefused extends Error {
  constructor(
    readonly status: 404 | 409,
    message: string,
  ) {
    super(message);
  }
}

/** Letters discarded per request at most (`more`: call again, the discarded ones are no longer pending). */
export const MAX_DISCARD = 100;

type Found = { id: string; source: LetterDiscard['source']; state: string; replayedAt?: string };

async function find(deps: DiscardDeps, id: string): Promise<Found | undefined> {
  if (isDeadLetterId(id)) {
    const l = await deps.deadLetters.read(id);
    if (!l) return undefined;
    const at = l.value.replayedAt;
    return { id, source: 'stream', state: l.value.state, ...(at ? { replayedAt: formatTimestamp(at) } : {}) };
  }
  const w = await deps.deadLetters.writer.read(id);
  return w ? { id, source: 'writer', state: w.view.state } : undefined;
}

/** Discards one letter by compare-and-swap; `already-discarded` when it was. */
async function discardOne(deps: DiscardDeps, f: Found, discard: Discard): Promise<LetterDiscard> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const done = { id: f.id, source: f.source };
    if (f.source === 'stream') {
      const l = await deps.deadLetters.read(f.id);
      if (l?.value.state === 'discarded') return { ...done, outcome: 'already-discarded' };
      if (!l || l.value.state === 'replayed')
        throw new SluiceError(
          'conflict',
          `dead letter ${f.id} was replayed or removed while it was discarded`,
        );
      if (await deps.deadLetters.update(withDiscard(l.value, discard), l.generation))
        return { ...done, outcome: 'discarded' };
    } else {
      const w = await deps.deadLetters.writer.read(f.id);
      if (!w)
        throw new SluiceError('conflict', `writer dead letter ${f.id} was removed while it was discarded`);
      if (w.view.state === 'discarded') return { ...done, outcome: 'already-discarded' };
      if (await deps.deadLetters.writer.discard(w, discard)) return { ...done, outcome: 'discarded' };
    }
  }
  throw new SluiceError('conflict', `dead letter ${f.id} kept changing while it was discarded`);
}

/** The pending letters of `table` (stream letters of it, writer letters all of whose mutations are of it). */
async function pendingOf(deps: DiscardDeps, table: string): Promise<{ ids: string[]; more: boolean }> {
  const ids: string[] = [];
  for (const store of [deps.deadLetters, deps.deadLetters.writer]) {
    let pageToken: string | undefined;
    do {
      const page = await store.page({ ...(pageToken ? { pageToken } : {}), pageSize: 1000 });
      for (const s of page.items)
        if (s.state === 'pending' && s.table === table && (!('tables' in s) || s.tables.length === 1))
          ids.push(s.id);
      pageToken = page.nextPageToken;
    } while (pageToken && ids.length <= MAX_DISCARD);
    if (ids.length > MAX_DISCARD) break;
  }
  return { ids: ids.slice(0, MAX_DISCARD), more: ids.length > MAX_DISCARD };
}

/**
 * Discards the letters named (or every pending letter of `table`, {@link MAX_DISCARD} per call).
 * @throws DiscardRefused naming every unknown id (404) or every replayed letter (409), before any change.
 */
export async function discardDeadLetters(
  deps: DiscardDeps,
  request: DiscardRequest,
): Promise<{ results: LetterDiscard[]; discarded: number; alreadyDiscarded: number; more: boolean }> {
  const chosen = request.ids ? { ids: request.ids, more: false } : await pendingOf(deps, request.table ?? '');
  const found: Found[] = [];
  const missing: string[] = [];
  for (const id of new Set(chosen.ids)) {
    const f = await find(deps, id);
    if (f) found.push(f);
    else missing.push(id);
  }
  if (missing.length > 0) throw new DiscardRefused(404, `no dead letter ${missing.join(', ')}`);
  const replayed = found.filter((f) => f.state === 'replayed');
  if (replayed.length > 0)
    throw new DiscardRefused(
      409,
      replayed
        .map(
          (f) =>
            `dead letter ${f.id} was replayed at ${f.replayedAt ?? '?'}: a replayed letter is not discarded`,
        )
        .join('; '),
    );
  const discard: Discard = {
    by: request.by,
    at: deps.now(),
    ...(request.reason ? { reason: request.reason } : {}),
  };
  const results: LetterDiscard[] = [];
  for (const f of found) results.push(await discardOne(deps, f, discard));
  for (const r of results.filter((x) => x.outcome === 'discarded'))
    deps.log.notice('dead-letter.discarded', { deadLetter: r.id, source: r.source, by: request.by });
  const count = (o: LetterDiscard['outcome']) => results.filter((r) => r.outcome === o).length;
  return {
    results,
    discarded: count('discarded'),
    alreadyDiscarded: count('already-discarded'),
    more: chosen.more,
  };
}
