/**
 * "Did you mean …?": the known name nearest to a misspelt one, by edit distance, for the warnings about
 * unknown environment variables and the errors about unknown stack configuration keys.
 */

/** Levenshtein distance (insert, delete, substitute; each costs 1), case-sensitive. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * The candidate nearest to `name` (ignoring case), or undefined when none is close: at most a quarter of the
 * name's length apart, and at most 3 edits, so that an unrelated name gets no suggestion. Ties go to the first
 * candidate.
 */
export function nearest(name: string, candidates: Iterable<string>): string | undefined {
  const limit = Math.min(3, Math.max(1, Math.floor(name.length / 4)));
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(name.toUpperCase(), candidate.toUpperCase());
    if (distance <= limit && (!best || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}
