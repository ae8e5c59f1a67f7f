/**
 * Generation and metageneration preconditions, checked the way the JSON API checks them: `0` in
 * `ifGenerationMatch` means "no live object" (create-only), `0` in `ifGenerationNotMatch` means "a live object
 * exists". A missing object has generation 0 and no metageneration.
 */
import { z } from 'zod';
import { conditionNotMet, invalid } from './errors';

/** Precondition query parameters, parsed to bigints (generations exceed 2^53 in production). */
export interface Preconditions {
  ifGenerationMatch?: bigint;
  ifGenerationNotMatch?: bigint;
  ifMetagenerationMatch?: bigint;
  ifMetagenerationNotMatch?: bigint;
}

/** Query parameter names; a copy's source uses the same names with `ifSource` (`ifSourceGenerationMatch`). */
const KEYS = [
  'ifGenerationMatch',
  'ifGenerationNotMatch',
  'ifMetagenerationMatch',
  'ifMetagenerationNotMatch',
] as const;

const integer = z.string().regex(/^-?\d+$/, 'must be an integer');

/** Reads the preconditions from a query string; `source` reads the `ifSource...` ones of a copy. */
export function parsePreconditions(query: URLSearchParams, source = false): Preconditions {
  const out: Preconditions = {};
  for (const key of KEYS) {
    const name = source ? key.replace(/^if/, 'ifSource') : key;
    const raw = query.get(name);
    if (raw === null) continue;
    const parsed = integer.safeParse(raw);
    if (!parsed.success) throw invalid(`Invalid argument for ${name}: ${raw}`);
    out[key] = BigInt(parsed.data);
  }
  return out;
}

/** The live version the conditions are checked against (undefined when there is none). */
export interface Versioned {
  generation: bigint;
  metageneration: bigint;
}

/** Throws 412 `conditionNotMet` when any condition fails against `current`. */
export function checkPreconditions(current: Versioned | undefined, pre: Preconditions): void {
  const generation = current?.generation ?? 0n;
  if (pre.ifGenerationMatch !== undefined && pre.ifGenerationMatch !== generation) throw conditionNotMet();
  if (pre.ifGenerationNotMatch !== undefined && pre.ifGenerationNotMatch === generation)
    throw conditionNotMet();
  if (pre.ifMetagenerationMatch !== undefined) {
    if (!current || current.metageneration !== pre.ifMetagenerationMatch) throw conditionNotMet();
  }
  if (
    pre.ifMetagenerationNotMatch !== undefined &&
    current?.metageneration === pre.ifMetagenerationNotMatch
  ) {
    throw conditionNotMet();
  }
}
