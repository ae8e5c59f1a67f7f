import { changeStreamQuery, parseStreamName } from '../../../shared/domain/change-stream-query';
import { parseTimestamp } from '../../../shared/domain/timestamp';

const start = parseTimestamp('2024-01-01T00:00:00.000000001Z');
const end = parseTimestamp('2024-01-01T00:01:00Z');

describe('change stream query text', () => {
  it('uses named arguments in GoogleSQL with typed NULLs for the initial query', () => {
    const q = changeStreamQuery({
      dialect: 'GOOGLE_STANDARD_SQL',
      stream: parseStreamName('OrdersStream'),
      start,
      end: null,
      partitionToken: null,
      heartbeatMillis: 10_000,
    });
    expect(q.sql).toBe(
      'SELECT ChangeRecord FROM READ_OrdersStream(start_timestamp => @startTimestamp, end_timestamp => @endTimestamp, ' +
        'partition_token => @partitionToken, heartbeat_milliseconds => @heartbeatMilliseconds)',
    );
    expect(q.params).toEqual({
      startTimestamp: '2024-01-01T00:00:00.000000001Z',
      endTimestamp: null,
      partitionToken: null,
      heartbeatMilliseconds: '10000',
    });
    expect(q.types).toEqual({
      startTimestamp: 'timestamp',
      endTimestamp: 'timestamp',
      partitionToken: 'string',
      heartbeatMilliseconds: 'int64',
    });
  });

  it('calls spanner.read_json_<stream> with $1..$4 and a literal null in PostgreSQL', () => {
    const q = changeStreamQuery({
      dialect: 'POSTGRESQL',
      stream: parseStreamName('orders_stream'),
      start,
      end,
      partitionToken: 'tok',
      heartbeatMillis: 1000,
    });
    expect(q.sql).toBe('SELECT * FROM "spanner"."read_json_orders_stream"($1, $2, $3, $4, null)');
    expect(q.params).toEqual({
      p1: '2024-01-01T00:00:00.000000001Z',
      p2: '2024-01-01T00:01:00.000000000Z',
      p3: 'tok',
      p4: '1000',
    });
    expect(q.types).toEqual({ p1: 'timestamp', p2: 'timestamp', p3: 'string', p4: 'int64' });
  });

  it.each(['Orders; DROP TABLE x', 'a"b', '1stream', '', 'x'.repeat(129), 'orders)--', 'ÄÖ', 'a b'])(
    'rejects stream name %j so no SQL can be injected',
    (name) => {
      expect(() => parseStreamName(name)).toThrow(/invalid change stream name/);
      expect(() =>
        changeStreamQuery({
          dialect: 'POSTGRESQL',
          stream: name as never,
          start,
          end,
          partitionToken: null,
          heartbeatMillis: 1000,
        }),
      ).toThrow(/invalid change stream name/);
    },
  );

  it('accepts the longest valid identifier', () => {
    expect(parseStreamName(`a${'_9'.repeat(63)}b`)).toHaveLength(128);
  });

  it.each([0, -1, 1.5, Number.NaN])('rejects heartbeat %p', (heartbeatMillis) => {
    expect(() =>
      changeStreamQuery({
        dialect: 'GOOGLE_STANDARD_SQL',
        stream: parseStreamName('s'),
        start,
        end,
        partitionToken: null,
        heartbeatMillis,
      }),
    ).toThrow(/invalid heartbeat/);
  });

  it('rejects a window whose start is after its end', () => {
    expect(() =>
      changeStreamQuery({
        dialect: 'GOOGLE_STANDARD_SQL',
        stream: parseStreamName('s'),
        start: end,
        end: start,
        partitionToken: 't',
        heartbeatMillis: 1000,
      }),
    ).toThrow(/start is after end/);
  });
});
