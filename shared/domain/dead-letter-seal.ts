/**
 * The seal of a stream dead letter (ADR-2305): an HMAC-SHA256 over the letter's content, keyed with a secret
 * only the reader (which writes letters) and the backfill function (which replays them) hold. Every account
 * with `objectUser` on the ledger bucket can create an object shaped as a letter; only these two can seal
 * one, so replay writes to the replica only what the reader set aside. The seal covers everything but the
 * replay state (`state`, `replayedAt`, `replays`, `discarded`), which a replay or a discard changes. Pure: the environment is passed in.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { parseVariables } from './env-variables';
import { ledgerReplacer } from './ledger/codec';

/** The settings of sealing and checking letters. */
export interface SealSettings {
  /** The HMAC key; absent: letters are written unsigned and none can be checked. */
  key: Buffer | undefined;
  /** Replay unsigned letters (those written before letters were sealed); default false. */
  trustUnsigned: boolean;
}

/** The parts of a letter the seal reads (a {@link import('./dead-letter').DeadLetter}). */
export interface Sealable {
  state: unknown;
  replayedAt: unknown;
  replays: unknown;
  discarded?: unknown;
  seal?: string;
}

/** Whether replay may trust a letter, and why not. */
export type SealCheck = { trusted: true; unsigned: boolean } | { trusted: false; reason: string };

const PREFIX = 'hmac-sha256:';

/** Shortest key accepted: 32 bytes, the HMAC-SHA256 block's recommended minimum (RFC 2104 §3). */
export const MIN_KEY_BYTES = 32;

/** The variables {@link parseSealSettings} reads. */
export const SEAL_VARIABLES = ['SLUICE_DEAD_LETTER_KEY', 'SLUICE_TRUST_UNSIGNED_DEAD_LETTERS'] as const;

const base64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

const schema = z.strictObject({
  SLUICE_DEAD_LETTER_KEY: z
    .string()
    .refine((v) => base64.test(v) && Buffer.from(v, 'base64').length >= MIN_KEY_BYTES, {
      error: `must be base64 of at least ${MIN_KEY_BYTES} random bytes (openssl rand -base64 32)`,
    })
    .optional(),
  SLUICE_TRUST_UNSIGNED_DEAD_LETTERS: z.enum(['true', 'false'], 'must be true or false').default('false'),
});

/** Parses the seal settings. @throws ConfigError naming every bad variable. */
export function parseSealSettings(env: Record<string, string | undefined>): SealSettings {
  const d = parseVariables(env, SEAL_VARIABLES, schema);
  return {
    key: d.SLUICE_DEAD_LETTER_KEY ? Buffer.from(d.SLUICE_DEAD_LETTER_KEY, 'base64') : undefined,
    trustUnsigned: d.SLUICE_TRUST_UNSIGNED_DEAD_LETTERS === 'true',
  };
}

/** JSON with every object's keys sorted: the same content gives the same text whatever its key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    const keys = Object.keys(o).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The text the seal is computed over: the letter as stored (timestamps as text), without its replay state. */
function sealedText(letter: Sealable): string {
  const { state: _s, replayedAt: _r, replays: _p, discarded: _d, seal: _x, ...content } = letter;
  return canonicalJson(JSON.parse(JSON.stringify(content, ledgerReplacer)));
}

function mac(letter: Sealable, key: Buffer): string {
  return `${PREFIX}${createHmac('sha256', key).update(sealedText(letter)).digest('base64url')}`;
}

/** The letter with its seal, or unchanged when there is no key. */
export function sealed<T extends Sealable>(letter: T, key: Buffer | undefined): T {
  return key ? { ...letter, seal: mac(letter, key) } : letter;
}

/** Checks a letter's seal against the key, under the policy for unsigned letters. */
export function checkSeal(letter: Sealable, settings: SealSettings): SealCheck {
  if (letter.seal === undefined) {
    if (settings.trustUnsigned) return { trusted: true, unsigned: true };
    return {
      trusted: false,
      reason:
        'unsigned: not sealed by the reader (a letter written before seals, or not by the reader); ' +
        'replay letters written before with SLUICE_TRUST_UNSIGNED_DEAD_LETTERS=true (ADR-2305)',
    };
  }
  if (!settings.key)
    return {
      trusted: false,
      reason: 'sealed, but this function has no SLUICE_DEAD_LETTER_KEY to check the seal with',
    };
  const want = Buffer.from(mac(letter, settings.key));
  const got = Buffer.from(letter.seal);
  if (want.length === got.length && timingSafeEqual(want, got)) return { trusted: true, unsigned: false };
  return {
    trusted: false,
    reason: "seal does not match the content: not written by this pipeline's reader, or changed since",
  };
}
