/** The CLI's dead-letter listing shows what finds the row: table, key, column, commit timestamp, reason. */
import { formatDeadLetters } from '../../cli/failure-view';

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
