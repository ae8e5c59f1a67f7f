/**
 * Small zod building blocks shared by the ledger codec and the configuration schema.
 */
import { z } from 'zod';
import { parseTimestamp, type Timestamp } from './timestamp';

/** An RFC 3339 string (0–9 fractional digits, `Z` or an offset), parsed to a nanosecond {@link Timestamp}. */
export const timestampString = z.string().transform((text, ctx): Timestamp => {
  try {
    return parseTimestamp(text);
  } catch (err) {
    ctx.issues.push({ code: 'custom', message: (err as Error).message, input: text });
    return z.NEVER;
  }
});

/** One readable line per issue: `path: message` (path `(root)` for the whole value). */
export function describeIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issuePath(issue.path)}: ${issue.message}`);
}

/** A zod issue path as `a.b[0].c`. */
export function issuePath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

/**
 * A whole number of milliseconds in `[min, max]`, given as a number or a decimal string (environment values are
 * strings), with a default.
 */
export function millis(min: number, max: number, fallback: number) {
  const rule = `must be a whole number of milliseconds from ${min} to ${max}`;
  return boundedWholeNumber(rule, min, max, fallback);
}

/** A whole number in `[min, max]`, given as a number or a decimal string, with a default. */
export function wholeNumber(min: number, max: number, fallback: number) {
  return boundedWholeNumber(`must be a whole number from ${min} to ${max}`, min, max, fallback);
}

/** A whole number in `[min, max]` (a number or a decimal string) or `fallback`; `rule` names the range. */
function boundedWholeNumber(rule: string, min: number, max: number, fallback: number) {
  return z
    .preprocess(
      (v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v),
      z.number({ error: rule }).int(rule).min(min, rule).max(max, rule),
    )
    .default(fallback);
}
