/** The JSON columns of a change record (`keys`, `new_values`, `old_values`): text or parsed, checked whole. */
import { DecodeError, readJsonObject } from '../../../shared/domain/client-values';

describe('readJsonObject', () => {
  it('reads JSON text and parsed objects alike, nested arrays and objects included', () => {
    const text = '{"a":[1,"x",null,{"b":true}],"c":{"d":[]},"__proto__":2}';
    expect(readJsonObject(text, 'mods[0].keys')).toEqual(JSON.parse(text));
    expect(readJsonObject({ a: [1, { b: false }] }, 'p')).toEqual({ a: [1, { b: false }] });
    expect(readJsonObject(null, 'p')).toEqual({});
  });

  it.each([
    ['a number beyond a double, anywhere', '{"a":{"b":[1,1e400]}}', /expected a JSON object/],
    ['text that is not JSON', '{"a":', /expected JSON text/],
    ['an array', '[1]', /expected a JSON object/],
    ['a scalar', '"x"', /expected a JSON object/],
  ])('refuses %s, naming the path', (_what, text, message) => {
    const read = () => readJsonObject(text, 'mods[3].new_values');
    expect(read).toThrow(DecodeError);
    expect(read).toThrow(message);
    expect(read).toThrow(/^mods\[3\]\.new_values: /);
  });

  it('refuses a parsed value that JSON cannot hold: a class instance, NaN, undefined inside', () => {
    for (const value of [{ a: new Date(0) }, { a: [Number.NaN] }, { a: { b: undefined } }])
      expect(() => readJsonObject(value, 'p')).toThrow(DecodeError);
  });
});
