/**
 * The simulator's only source of choice: a seeded generator (sfc32) whose every draw is recorded, so a run is
 * a function of its seed, and can be replayed from the recorded list of draws instead (a shrunk schedule).
 * Convention that makes shrinking work: a draw of 0 always means "the plain behaviour" (no fault, the first
 * due step, the smallest workload), so zeroing draws turns a schedule into a simpler one.
 */

/** sfc32 (Chris Doty-Humphrey's small fast counter): 32-bit state words, one 32-bit output per call. */
function sfc32(seed: number): () => number {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const next = () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 12; i++) next(); // mix the seed in before the first draw
  return next;
}

/** Every choice of one run: drawn from a seed, or replayed from a recorded list (missing draws are 0). */
export class Decisions {
  /** The draws made so far, in order. */
  readonly log: number[] = [];
  /** How often each legal behaviour fired in this run (docs/testing.md lists them), by name. */
  readonly fired: Record<string, number> = {};
  private readonly gen: (() => number) | null;

  constructor(
    readonly seed: number,
    private readonly replay: readonly number[] | null = null,
  ) {
    this.gen = replay === null ? sfc32(seed) : null;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    if (n <= 1) return 0;
    const i = this.log.length;
    const raw = this.gen ? this.gen() : (this.replay?.[i] ?? 0);
    const v = this.gen ? raw % n : Math.min(raw, n - 1);
    this.log.push(v);
    return v;
  }

  /** True with probability `p`; a draw of 0 is false (the plain behaviour). */
  chance(p: number): boolean {
    const scale = 10_000;
    return this.int(scale) >= Math.round((1 - p) * scale);
  }

  /** Counts one firing of a behaviour (the run report sums them, the fixed-seed test wants each). */
  note(behaviour: string): void {
    this.fired[behaviour] = (this.fired[behaviour] ?? 0) + 1;
  }

  /** One item; a draw of 0 picks the first. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
}

/** A schedule as text: the non-zero draws as `index:value`, comma-separated (what `--replay` reads). */
export function formatSchedule(log: readonly number[]): string {
  return log.flatMap((v, i) => (v === 0 ? [] : [`${i}:${v}`])).join(',');
}

/** Parses {@link formatSchedule}'s text back into a list of draws. */
export function parseSchedule(text: string): number[] {
  const out: number[] = [];
  for (const part of text.split(',').filter((p) => p.length > 0)) {
    const [i, v] = part.split(':').map(Number);
    if (!Number.isInteger(i) || !Number.isInteger(v)) throw new Error(`bad schedule entry "${part}"`);
    while (out.length < i!) out.push(0);
    out[i!] = v!;
  }
  return out;
}

/**
 * Shrinks a failing schedule: zeroes chunks of draws (halving the chunk size down to one) and keeps each
 * change under which `fails` still holds. Bounded by `budget` replays.
 */
export async function shrink(
  log: readonly number[],
  fails: (schedule: number[]) => Promise<boolean>,
  budget = 200,
): Promise<number[]> {
  let best = [...log];
  let tries = 0;
  for (let size = Math.max(1, best.length >> 1); size >= 1; size >>= 1) {
    for (let start = 0; start < best.length && tries < budget; start += size) {
      if (best.slice(start, start + size).every((v) => v === 0)) continue;
      const candidate = best.map((v, i) => (i >= start && i < start + size ? 0 : v));
      tries++;
      if (await fails(candidate)) best = candidate;
    }
  }
  return best;
}
