/** The CLI's dead-letter listing shows what finds the row: table, key, column, commit timestamp, reason. */
import { formatDeadLetters, formatReplay, replaySucceeded } from '../../cli/failure-view';

describe('formatDeadLetters', () => {
  it('prints each letter with its key, column and commit timestamp, and a dash where one is unknown', () => {
    const text = formatDeadLetters({
      items: [
        {
          id: 'Orders/1',
          state: 'pending',
          table: 'Orders',
          key: '{"Id":"2"}',
          commitTimestamp: '2026-01-01T00:00:00.200000000Z',
          records: 1,
          reason: 'permanent:UnrepresentableError',
          partition: 'p1',
          updated: '2026-01-01T00:00:01Z',
        },
      ],
      counts: { pending: 1, pendingRecords: 1, replayed: 0 },
    });
    const [header, row] = text.split('\n');
    expect(header).toMatch(/table\s+key\s+column\s+commit timestamp\s+records\s+reason/);
    expect(row).toMatch(
      /Orders\s+\{"Id":"2"\}\s+-\s+2026-01-01T00:00:00\.200000000Z\s+1\s+permanent:UnrepresentableError/,
    );
  });
});

describe('a replay that refused untrusted letters (ADR-2305)', () => {
  const body = {
    replayed: 1,
    failed: 0,
    untrusted: 1,
    alreadyReplayed: 0,
    more: false,
    results: [
      { id: 'Orders/1', outcome: 'replayed', rows: 1 },
      { id: 'Orders/2', outcome: 'untrusted', error: 'unsigned: not sealed by the reader' },
    ],
  };

  it('names each refused letter and its reason, counts them, and is not a success (exit 1)', () => {
    const text = formatReplay(body);
    expect(text).toMatch(/^untrusted\s+Orders\/2 {2}unsigned: not sealed by the reader$/m);
    expect(text).toMatch(/replayed 1, failed 0, untrusted 1, already replayed 0$/);
    expect(replaySucceeded(body)).toBe(false);
    expect(replaySucceeded({ ...body, untrusted: 0, results: [body.results[0]] })).toBe(true);
  });
});
