/** The seal of a stream dead letter (ADR-2305): what replay trusts, read back as stored. */

import {
  newDeadLetter,
  parseDeadLetter,
  serializeDeadLetter,
  withReplay,
} from '../../../shared/domain/dead-letter';
import { checkSeal, parseSealSettings, sealed } from '../../../shared/domain/dead-letter-seal';
import { SluiceError } from '../../../shared/domain/errors';
import { parseTimestamp } from '../../../shared/domain/timestamp';
import { columnTypesOf, soleRecordOfTransaction } from './support/change-records';

const ts = (s: string) => parseTimestamp(`2026-01-01T00:00:${s}Z`);
const key = Buffer.alloc(32, 3);
const settings = { key, trustUnsigned: false };

const record = soleRecordOfTransaction({
  commitTimestamp: ts('01.000000001'),
  recordSequence: '00000001',
  serverTransactionId: 'tx',
  tableName: 'Customers',
  columnTypes: columnTypesOf([['Id', { code: 'INT64' }]], 'Id'),
  mods: [{ keys: { Id: '1' }, newValues: { Email: null, Note: { b: 1, a: [2] } }, oldValues: {} }],
});

const letter = newDeadLetter({
  pipeline: 'p',
  partition: { id: 'a'.repeat(32), epoch: 0 },
  position: ts('00'),
  now: ts('02'),
  rejected: [{ record, error: new SluiceError('permanent', 'Email is required') }],
  reason: 'permanent:Error',
});

/** The letter as the object store gives it back. */
const stored = (l: typeof letter) => parseDeadLetter(serializeDeadLetter(l).toString('utf8'));

test('a letter sealed by the reader is trusted as stored, and still after a replay attempt changed it', () => {
  const back = stored(sealed(letter, key));
  expect(checkSeal(back, settings)).toEqual({ trusted: true, unsigned: false });
  const attempted = stored(withReplay(back, { at: ts('03'), ok: false, message: 'again' }));
  expect(checkSeal(attempted, settings)).toEqual({ trusted: true, unsigned: false });
});

test('the seal does not depend on the order of keys in the stored JSON', () => {
  const back = JSON.parse(serializeDeadLetter(sealed(letter, key)).toString('utf8')) as Record<
    string,
    unknown
  >;
  const reordered = Object.fromEntries(Object.entries(back).reverse());
  expect(checkSeal(parseDeadLetter(JSON.stringify(reordered)), settings).trusted).toBe(true);
});

test('a changed value, another key, or no key at all is untrusted, naming why', () => {
  const s = sealed(letter, key);
  const changed = structuredClone(stored(s));
  changed.records[0]!.record.mods[0]!.keys = { Id: '2' };
  expect(checkSeal(changed, settings)).toEqual({
    trusted: false,
    reason: expect.stringContaining('seal does not match the content'),
  });
  expect(checkSeal(stored(s), { key: Buffer.alloc(32, 4), trustUnsigned: true }).trusted).toBe(false);
  expect(checkSeal(stored(s), { key: undefined, trustUnsigned: true })).toEqual({
    trusted: false,
    reason: expect.stringContaining('no SLUICE_DEAD_LETTER_KEY'),
  });
});

test('an unsigned letter is untrusted unless unsigned letters are trusted explicitly', () => {
  expect(checkSeal(stored(letter), settings)).toEqual({
    trusted: false,
    reason: expect.stringContaining('SLUICE_TRUST_UNSIGNED_DEAD_LETTERS=true'),
  });
  expect(checkSeal(stored(letter), { key, trustUnsigned: true })).toEqual({ trusted: true, unsigned: true });
});

test('the settings: no key and unsigned letters refused by default; a short key or a bad flag is refused', () => {
  expect(parseSealSettings({})).toEqual({ key: undefined, trustUnsigned: false });
  const good = parseSealSettings({
    SLUICE_DEAD_LETTER_KEY: key.toString('base64'),
    SLUICE_TRUST_UNSIGNED_DEAD_LETTERS: 'true',
  });
  expect(good).toEqual({ key, trustUnsigned: true });
  expect(() =>
    parseSealSettings({ SLUICE_DEAD_LETTER_KEY: 'c2hvcnQ=', SLUICE_TRUST_UNSIGNED_DEAD_LETTERS: 'yes' }),
  ).toThrow(/SLUICE_DEAD_LETTER_KEY: must be base64 of at least 32[\s\S]*SLUICE_TRUST_UNSIGNED_DEAD_LETTERS/);
});
