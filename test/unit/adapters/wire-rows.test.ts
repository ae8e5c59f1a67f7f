/** Rows from raw PartialResultSets: values in wire form, chunked values merged as the API documents. */
import { mergeChunks, wireRows, wireValue } from '../../../shared/adapters/spanner/wire-rows';

const s = (v: string) => ({ kind: 'stringValue', stringValue: v });
const n = (v: number) => ({ kind: 'numberValue', numberValue: v });
const l = (...values: object[]) => ({ kind: 'listValue', listValue: { values } });
const nul = { kind: 'nullValue', nullValue: 'NULL_VALUE' };

async function* sets(...items: object[]) {
  yield* items;
}

async function rows(...items: object[]) {
  const out: unknown[] = [];
  const fields: string[] = [];
  for await (const r of wireRows(sets(...items), (f) => fields.push(...f.map((x) => x.name)))) out.push(r);
  return { out, fields };
}

test('wire values keep every form the mods carry', () => {
  expect(wireValue(s('9223372036854775807'))).toBe('9223372036854775807');
  expect(wireValue(n(1.5))).toBe(1.5);
  expect(wireValue(s('NaN'))).toBe('NaN');
  expect(wireValue({ kind: 'boolValue', boolValue: false })).toBe(false);
  expect(wireValue(nul)).toBeNull();
  expect(wireValue(l(s('a'), nul, l(n(1))))).toEqual(['a', null, [1]]);
  expect(wireValue(undefined)).toBeNull();
});

test('chunks merge: strings concatenate, lists join their boundary elements, other elements stay apart', () => {
  expect(mergeChunks('ab', 'cd')).toBe('abcd');
  expect(mergeChunks(['a', 'b'], ['c', 'd'])).toEqual(['a', 'bc', 'd']);
  expect(mergeChunks([1, 2], [3])).toEqual([1, 2, 3]);
  expect(mergeChunks([['x'], ['y']], [['z'], 'w'])).toEqual([['x'], ['yz'], 'w']);
  expect(mergeChunks(['a', null], ['b'])).toEqual(['a', null, 'b']);
  expect(() => mergeChunks('a', ['b'])).toThrow(/another kind/);
});

test('rows assemble across sets and chunked values; a stream ending inside a row is an error', async () => {
  const fields = [{ name: 'K' }, { name: 'V' }];
  const { out, fields: names } = await rows(
    { metadata: { rowType: { fields } }, values: [s('1'), s('he')], chunkedValue: true },
    { values: [s('llo'), s('2')] },
    { values: [l(s('x'), s('y'))], chunkedValue: true },
    { values: [l(s('z'))] },
  );
  expect(names).toEqual(['K', 'V']);
  expect(out).toEqual([
    ['1', 'hello'],
    ['2', ['x', 'yz']],
  ]);
  await expect(rows({ metadata: { rowType: { fields } }, values: [s('1')] })).rejects.toThrow(/inside a row/);
});
