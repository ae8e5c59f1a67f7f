/** The nearest known name for a typo, and no suggestion for an unrelated name. */
import { editDistance, nearest } from '../../../shared/domain/suggest';

it('measures edit distance', () => {
  expect(editDistance('operator', 'operators')).toBe(1);
  expect(editDistance('INSTANS', 'INSTANCE')).toBe(2);
  expect(editDistance('', 'abc')).toBe(3);
  expect(editDistance('same', 'same')).toBe(0);
});

it('suggests the nearest candidate within a quarter of the name', () => {
  const known = ['SLUICE_SPANNER_INSTANCE', 'SLUICE_SPANNER_DATABASE', 'SLUICE_SPANNER_STREAM'];
  expect(nearest('SLUICE_SPANNER_INSTANS', known)).toBe('SLUICE_SPANNER_INSTANCE');
  expect(nearest('SLUICE_SPANER_STREAM', known)).toBe('SLUICE_SPANNER_STREAM');
  expect(nearest('operator', ['prefix', 'operators', 'alerts'])).toBe('operators');
  expect(nearest('sluice_spanner_stream', known)).toBe('SLUICE_SPANNER_STREAM');
});

it('suggests nothing for an unrelated name', () => {
  expect(nearest('SLUICE_COLOUR', ['SLUICE_MODE', 'SLUICE_TABLES'])).toBeUndefined();
  expect(nearest('x', ['prefix'])).toBeUndefined();
});
