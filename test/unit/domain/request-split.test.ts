/** Splitting a batch into requests: order kept, size and count limits, an oversized item alone. */
import { splitBySize } from '../../../shared/domain/request-split';

const len = (s: string) => s.length;

describe('splitBySize', () => {
  it('keeps the order and fills each group up to the size limit', () => {
    expect(splitBySize(['aa', 'bb', 'cc', 'd'], len, 4)).toEqual([
      ['aa', 'bb'],
      ['cc', 'd'],
    ]);
  });

  it('also stops a group at the count limit', () => {
    expect(splitBySize(['a', 'b', 'c', 'd', 'e'], len, 100, 2)).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
  });

  it('sends an item over the size limit alone, between the groups around it', () => {
    expect(splitBySize(['a', 'xxxxxx', 'b', 'c'], len, 3)).toEqual([['a'], ['xxxxxx'], ['b', 'c']]);
  });

  it('gives no group for no items, and one item per group at a count limit of 1', () => {
    expect(splitBySize([], len, 3)).toEqual([]);
    expect(splitBySize(['a', 'b'], len, 3, 1)).toEqual([['a'], ['b']]);
  });
});
