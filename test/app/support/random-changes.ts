/** Random changes and partition churn for the property-style pipeline tests, drawn from a seeded generator. */
import { addMillis } from '../../../shared/domain/timestamp';
import type { Harness } from './harness';

/** How the changes are drawn. */
export interface ChangeMix {
  /** Commits are 1 to this many milliseconds apart. */
  maxGapMs: number;
  /** A split happens only while fewer partitions than this are live. */
  maxLive: number;
  /** Each commit has 1 to this many mods (one per key). */
  maxMods: number;
  /** The share of mods to Orders; the others go to Items. */
  ordersShare: number;
  /** Keys are drawn from 0 to this, excluded. */
  ids: number;
  /** The share of mods writing NULL (none drawn when 0). */
  nullShare: number;
}

/**
 * Writes the next three seconds of changes to the script, from `from` on (about 4 % splits, 3 % merges, the
 * rest commits), and moves the clock to the end of them. Returns the first time past them, where the next
 * call goes on.
 */
export function scriptChanges(
  h: Harness,
  rnd: () => number,
  from: Harness['now'],
  mix: ChangeMix,
): Harness['now'] {
  let at = from;
  const until = addMillis(h.now, 3_000);
  while (true) {
    at = addMillis(at, 1 + Math.floor(rnd() * mix.maxGapMs));
    if (at > until) break;
    const roll = rnd();
    const live = h.script.live(at);
    if (roll < 0.04 && live.length < mix.maxLive)
      h.script.split(at, live[Math.floor(rnd() * live.length)]!.token);
    else if (roll < 0.07 && live.length > 1) h.script.merge(at, live[0]!.token, live[1]!.token);
    else {
      const n = 1 + Math.floor(rnd() * mix.maxMods);
      const mods = Array.from({ length: n }, () => ({
        table: rnd() < mix.ordersShare ? 'Orders' : 'Items',
        id: Math.floor(rnd() * mix.ids),
        val: mix.nullShare > 0 && rnd() < mix.nullShare ? null : `v${Math.floor(rnd() * 1000)}`,
      }));
      h.script.commit(at, [...new Map(mods.map((m) => [`${m.table}/${m.id}`, m])).values()]);
    }
  }
  h.now = until;
  return at;
}
