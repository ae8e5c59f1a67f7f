/**
 * The verdict's history check with writer traffic: rows the writer applied are expected on top of the
 * workload's mods, and a count that still differs names the check and both numbers, writer mods included.
 */
import { failedHistoryChecks, type HistoryReport, writerModsOf } from '../../local/verifier';

const report = (over: Partial<HistoryReport>): HistoryReport => ({
  source: 'Orders',
  history: 'orders_history',
  expectedMods: 519,
  historyRows: 523,
  distinctChangeIds: 523,
  duplicates: 0,
  streamRows: 523,
  earlierRows: 0,
  writerMods: 0,
  missing: { count: 0, examples: [] },
  ...over,
});

it('counts each row of every applied BatchWrite group, by table, and nothing of a failed group', () => {
  expect(
    writerModsOf([
      {
        outcomes: [
          { code: 0, rows: ['Orders ["a"]'] },
          { code: 5, rows: ['Orders ["missing"]'] },
        ],
      },
      {
        outcomes: [
          { code: 0, rows: ['Orders ["b"]', 'Orders ["c"]'] },
          { code: 0, rows: ['sales.Items [1]'] },
        ],
      },
    ]),
  ).toEqual({ Orders: 3, 'sales.Items': 1 });
});

it('expects the writer mods on top of the journal, and names both numbers when they still differ', () => {
  expect(failedHistoryChecks(report({ writerMods: 4 }), true)).toEqual([]);
  expect(failedHistoryChecks(report({}), true)).toEqual([
    'nothing else in history: stream rows 523 ≠ 519 mods',
  ]);
  expect(failedHistoryChecks(report({ writerMods: 3, earlierRows: 2 }), true)).toEqual([
    'nothing else in history: stream rows 523 ≠ 524 (519 mods + 3 writer mods + 2 restored rows)',
  ]);
});
