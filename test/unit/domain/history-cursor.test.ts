/** History cursors: what a replaced stream's row count means for the new offset, with and without a change of sources. */

import { SluiceError } from '../../../shared/domain/errors';
import {
  carriedOffset,
  type HistoryCursor,
  HistorySourcesChangedError,
  offsetForSources,
  rotationDue,
} from '../../../shared/domain/ledger';
import { parseTimestamp } from '../../../shared/domain/timestamp';

const at = parseTimestamp('2026-01-01T00:00:00Z');
const cursor = (offset: number, sources?: string): HistoryCursor => ({
  stream: 'projects/p/datasets/d/tables/t/streams/s1',
  offset,
  createdAt: at,
  schema: 'v1',
  ...(sources === undefined ? {} : { sources }),
});
const policy = { maxAgeMs: 60_000, maxRows: 100 };

describe('history cursor', () => {
  it('carries rows past the cursor and refuses a stream shorter than the ledger', () => {
    expect(carriedOffset(cursor(5), 5)).toBe(0);
    expect(carriedOffset(cursor(5), 8)).toBe(-3);
    expect(carriedOffset(cursor(-2), 1)).toBe(-3);
    expect(() => carriedOffset(cursor(5), 4)).toThrow(SluiceError);
  });

  it('rotates when other source tables feed the table, before any other reason', () => {
    const args = { now: at, tableSchema: 'v2', sources: 'Items,Orders', policy };
    expect(rotationDue(cursor(0, 'Orders'), args)).toBe('sources');
    expect(rotationDue(cursor(0, 'Items,Orders'), args)).toBe('schema');
    expect(rotationDue(cursor(0), args)).toBe('schema');
  });

  it('changes sources only when nothing lies past the cursor', () => {
    const to = { destination: 't', sources: 'Items,Orders' };
    expect(offsetForSources(cursor(5, 'Orders'), 5, to)).toBe(0);
    expect(offsetForSources(cursor(5, 'Items,Orders'), 7, to)).toBe(-2);
    expect(offsetForSources(cursor(5), 7, to)).toBe(-2);
    expect(() => offsetForSources(cursor(5, 'Orders'), 7, to)).toThrow(HistorySourcesChangedError);
    // Rows carried from an older stream were written with the old sources too.
    expect(() => offsetForSources(cursor(-1, 'Orders'), 0, to)).toThrow(
      /history\.sources-changed.*\[Orders\].*\[Items,Orders\]/s,
    );
    try {
      offsetForSources(cursor(5, 'Orders'), 7, to);
    } catch (err) {
      expect(err).toMatchObject({ kind: 'permanent', pastCursor: 2, before: 'Orders', now: 'Items,Orders' });
    }
    expect(() => offsetForSources(cursor(5, 'Orders'), 4, to)).toThrow(/ledger recorded 5/);
  });
});
