/**
 * Folding retired counter objects into one rollup (ADR-1806). Every instance leaves an object under
 * `<pipeline>/enrichment/`; the scheduler, which lists them each tick anyway, folds those not written for
 * `retireAfterMs` into `<pipeline>/enrichment-rollup.json` (written compare-and-swap on its generation) and
 * deletes a folded object only after the rollup holding its counts is written.
 *
 * The rollup records each folded object's name, generation and counts. Published counts are cumulative per
 * object, so an object's contribution is always its counts minus what the rollup recorded for it: a crash
 * between the rollup write and the delete, two schedulers folding at once, or an instance rewriting its
 * object between the listing and the delete never count anything twice. A record is dropped
 * {@link GONE_GRACE_MS} after its object left the listing; the name cannot come back, since an instance whose
 * object was deleted publishes under a fresh name from then on (see `EnrichmentCounters`).
 */
import { z } from 'zod';
import { SluiceError } from '../../domain/errors';
import type { ObjectInfo, ObjectStore } from '../../ports/object-store';
import { type LookupTotals, plus } from './totals';

/** Objects not written for this long are folded: far above the 5 s publish interval and an idle instance's life. */
export const DEFAULT_RETIRE_AFTER_MS = 60 * 60 * 1000;

/** How long a record is kept after its object left the listing: far above one tick. */
export const GONE_GRACE_MS = 10 * 60 * 1000;

const count = z.number().finite();
const totalsSchema = z.record(
  z.string(),
  z.object({
    dimension: z.string(),
    mode: z.string(),
    rows: count,
    reads: count,
    retries: count,
    missing: count,
    unresolved: count,
    cacheHits: count,
    cacheMisses: count,
  }),
);
const rollupSchema = z.object({
  version: z.literal(1),
  /** Counts of every folded object. */
  lookups: totalsSchema,
  /** How many distinct counter objects were ever folded. */
  objects: z.number().int().nonnegative(),
  /**
   * The folded objects (name → generation and counts folded). A record outlives its object by
   * {@link GONE_GRACE_MS} (`goneSince`), so a concurrent scheduler's slightly older listing that still shows
   * the object finds it recorded.
   */
  folded: z.record(
    z.string(),
    z.object({ generation: z.string(), lookups: totalsSchema, goneSince: z.number().optional() }),
  ),
});

/** The rollup object's content. */
export type Rollup = z.infer<typeof rollupSchema>;

/** A listed counter object with its parsed counts. */
export interface CounterObject {
  info: ObjectInfo;
  lookups: Record<string, LookupTotals>;
}

/** The rollup's name. Outside the counter prefix, so listing the counters never lists it. */
export function rollupName(pipeline: string): string {
  return `${pipeline}/enrichment-rollup.json`;
}

const EMPTY: Rollup = { version: 1, lookups: {}, objects: 0, folded: {} };

/** Reads the rollup; a malformed one is an error (folding over it could lose counts), never replaced. */
async function readRollup(
  store: ObjectStore,
  name: string,
): Promise<{ rollup: Rollup; generation: string | 0 }> {
  const o = await store.read(name);
  if (!o) return { rollup: structuredClone(EMPTY), generation: 0 };
  let json: unknown;
  try {
    json = JSON.parse(o.data.toString('utf8'));
  } catch {
    json = undefined;
  }
  const parsed = rollupSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue?.path.length ? ` at ${issue.path.join('.')}` : '';
    throw new SluiceError(
      'permanent',
      `${name}: not an enrichment rollup${at}: ${issue?.message ?? 'not JSON'}`,
    );
  }
  return { rollup: parsed.data, generation: o.generation };
}

/** Compares two decimal generations. */
function after(a: string, b: string): boolean {
  return BigInt(a) > BigInt(b);
}

/**
 * Plans a fold over `objects` into `rollup` (mutated): the objects to delete at their generation, and
 * whether the rollup changed. Retired objects newer than their record add only the delta above it.
 */
export function planFold(
  rollup: Rollup,
  objects: readonly CounterObject[],
  now: number,
  retireAfterMs: number,
): { changed: boolean; deletes: { name: string; generation: string }[] } {
  const deletes: { name: string; generation: string }[] = [];
  let changed = false;
  const listed = new Set(objects.map((o) => o.info.name));
  for (const [name, record] of Object.entries(rollup.folded)) {
    if (listed.has(name)) continue;
    if (record.goneSince === undefined) record.goneSince = now;
    else if (now - record.goneSince > GONE_GRACE_MS) delete rollup.folded[name];
    else continue;
    changed = true;
  }
  for (const { info, lookups } of objects) {
    const record = rollup.folded[info.name];
    if (record && info.generation === record.generation)
      deletes.push({ name: info.name, generation: info.generation });
    const updated = Date.parse(info.updated);
    if (!(updated < now - retireAfterMs) || (record && !after(info.generation, record.generation))) continue;
    plus(rollup.lookups, lookups, 1);
    if (record) plus(rollup.lookups, record.lookups, -1);
    else rollup.objects++;
    rollup.folded[info.name] = { generation: info.generation, lookups };
    deletes.push({ name: info.name, generation: info.generation });
    changed = true;
  }
  return { changed, deletes };
}

/** The status's sum: the rollup plus each listed object's counts above what the rollup recorded for it. */
export function sumWithRollup(
  rollup: Rollup,
  objects: readonly CounterObject[],
): { lookups: Record<string, LookupTotals>; instances: number } {
  const lookups: Record<string, LookupTotals> = {};
  plus(lookups, rollup.lookups, 1);
  let instances = rollup.objects;
  for (const { info, lookups: counts } of objects) {
    plus(lookups, counts, 1);
    const record = rollup.folded[info.name];
    if (record) plus(lookups, record.lookups, -1);
    else instances++;
  }
  return { lookups, instances };
}

/**
 * Folds the retired objects into the rollup (compare-and-swap, re-planned on a lost race), deletes the folded
 * objects, and returns the status's sum. A failed delete is left for a later tick: the record keeps it at zero.
 */
export async function foldAndSum(
  store: ObjectStore,
  pipeline: string,
  objects: readonly CounterObject[],
  clock: { now: number; retireAfterMs: number },
  onDeleteError: (name: string, err: unknown) => void,
): Promise<{ lookups: Record<string, LookupTotals>; instances: number; folded: number }> {
  // `folded`: the objects this tick folded or found folded, and deleted (or tried to).
  const name = rollupName(pipeline);
  for (let attempt = 0; ; attempt++) {
    const { rollup, generation } = await readRollup(store, name);
    const plan = planFold(rollup, objects, clock.now, clock.retireAfterMs);
    if (plan.changed) {
      const text = JSON.stringify(rollup);
      const out = await store.write(name, Buffer.from(text), {
        ifGeneration: generation,
        contentType: 'application/json',
      });
      // Another scheduler folded first: re-read its rollup and plan again (its records stop a second count).
      if (!out.ok && attempt < 4) continue;
      if (!out.ok) return { ...sumWithRollup((await readRollup(store, name)).rollup, objects), folded: 0 };
    }
    for (const d of plan.deletes) {
      try {
        await store.delete(d.name, d.generation);
      } catch (err) {
        onDeleteError(d.name, err);
      }
    }
    return { ...sumWithRollup(rollup, objects), folded: plan.deletes.length };
  }
}
