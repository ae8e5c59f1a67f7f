/**
 * Row values in texts that may reach the logs (ADR-2307). Where a message quotes a row's value or key, the
 * code that writes it marks that part ({@link rowValue}, {@link keyValue}); the message keeps its marks only
 * on its way to a log line, where {@link redact} applies `SLUICE_LOG_VALUES` — in one place, the log
 * formatter. Everywhere else (answers to the producer that sent the values, dead letters, errors) the text
 * is {@link plain}: a `SluiceError` strips the marks from its `message` and keeps the marked text apart.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';

/** `SLUICE_LOG_VALUES`: what of a row the logs may quote. */
export type LogValues = 'none' | 'keys' | 'all';

/** Every {@link LogValues}; `none` first, the default. */
export const LOG_VALUES: readonly LogValues[] = ['none', 'keys', 'all'];

/** The setting's schema, shared by the pipeline's and the writer's configuration. */
export const logValuesSchema = z.enum(LOG_VALUES, 'must be none, keys or all').default('none');

// Private-use code points: never in a message we write, and stripped before any text leaves but to a log.
const VALUE_OPEN = '\uE000';
const VALUE_CLOSE = '\uE001';
const KEY_OPEN = '\uE002';
const KEY_CLOSE = '\uE003';
const VALUE = /\uE000([^\uE000-\uE003]*)\uE001/g;
const KEY = /\uE002([^\uE000-\uE003]*)\uE003/g;
const ANY_MARK = /[\uE000-\uE003]/g;

/** The text shown in a log line instead of a row value. */
export const REDACTED_VALUE = '[value redacted]';

/** Marks the rendering of a row's (non-key) column value inside a message. */
export function rowValue(text: string): string {
  return `${VALUE_OPEN}${text.replace(ANY_MARK, '')}${VALUE_CLOSE}`;
}

/** Marks the rendering of a row's key (or a key column's value) inside a message. */
export function keyValue(text: string): string {
  return `${KEY_OPEN}${text.replace(ANY_MARK, '')}${KEY_CLOSE}`;
}

/** True when the text carries a mark. */
export function isMarked(text: string): boolean {
  return /[\uE000-\uE003]/.test(text);
}

/** The text with its marks removed: values and keys as written. */
export function plain(text: string): string {
  return text.replace(ANY_MARK, '');
}

/**
 * A stable stand-in for a key the logs must not quote: the same key always gives the same text, so an
 * operator can match a log line, the status and a dead letter without the key being written out.
 */
export function keyHash(key: string): string {
  return `key#${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}

/** The text as a log line shows it under `level`. */
export function redact(text: string, level: LogValues): string {
  if (level === 'all') return plain(text);
  const keys = level === 'keys' ? text.replace(KEY, '$1') : text.replace(KEY, (_, k: string) => keyHash(k));
  return plain(keys.replace(VALUE, REDACTED_VALUE));
}

/** The key as the status or a log field shows it under `level` (the key itself, or its {@link keyHash}). */
export function shownKey(key: string, level: LogValues): string {
  return level === 'none' ? keyHash(key) : key;
}

/** Every string inside `value` (objects and arrays walked) redacted under `level`; other values unchanged. */
export function redactDeep(value: unknown, level: LogValues, depth = 0): unknown {
  if (typeof value === 'string') return isMarked(value) ? redact(value, level) : value;
  if (depth > 20 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, level, depth + 1));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v, level, depth + 1);
  return out;
}

/** The marked message of an error (a `SluiceError` keeps it apart from its plain `message`). */
export function markedMessage(err: unknown): string {
  if (err instanceof Error) return (err as { markedMessage?: string }).markedMessage ?? err.message;
  return String(err);
}
