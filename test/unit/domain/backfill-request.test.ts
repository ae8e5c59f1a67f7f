import {
  MAX_REQUEST_BYTES,
  mappedColumns,
  parseBackfillRequest,
} from '../../../shared/domain/backfill/request';
import { parseTimestamp } from '../../../shared/domain/timestamp';
import { ORDERS } from '../../app/backfill/support';

function problems(body: unknown, size?: number): string {
  const r = parseBackfillRequest(body, size);
  if (r.ok) throw new Error('expected a problem');
  return r.problems.join('\n');
}

describe('parseBackfillRequest', () => {
  it('accepts every option and parses the timestamp to nanoseconds', () => {
    const r = parseBackfillRequest({
      tables: ['Orders'],
      targets: ['history'],
      readTimestamp: '2024-05-01T10:00:00.123456789Z',
      dataBoost: true,
      priority: 'low',
      maxPartitions: 10,
    });
    expect(r).toEqual({
      ok: true,
      value: {
        tables: ['Orders'],
        targets: ['history'],
        readTimestamp: parseTimestamp('2024-05-01T10:00:00.123456789Z'),
        dataBoost: true,
        priority: 'low',
        maxPartitions: 10,
      },
    });
    expect(parseBackfillRequest(Buffer.from('{"tables":["A"]}'))).toEqual({
      ok: true,
      value: { tables: ['A'] },
    });
    expect(parseBackfillRequest('{"tables":["A"]}')).toEqual({ ok: true, value: { tables: ['A'] } });
    // A table of a named schema, by its qualified name (ADR-1405).
    expect(parseBackfillRequest({ tables: ['sales.Orders', 'Orders'] })).toEqual({
      ok: true,
      value: { tables: ['sales.Orders', 'Orders'] },
    });
  });

  it.each([
    [undefined, 'request body is empty'],
    ['', 'request body is empty'],
    [{}, 'request body is empty'],
    [Buffer.alloc(0), 'request body is empty'],
    ['{nope', 'not JSON'],
    [[1], 'must be a JSON object'],
    [{ tables: [] }, 'tables: must name at least one table'],
    [{ tables: 'Orders' }, 'tables: must be an array of table names'],
    [{ tables: ['Orders', 'Orders'] }, 'must not repeat a table'],
    [{ tables: ['Or-ders'] }, 'tables[0]: must be a table name'],
    [{ tables: ['a.b.c'] }, 'tables[0]: must be a table name (an identifier, or schema.table)'],
    [{ tables: ['A'], targets: ['replica', 'replica'] }, 'must not repeat a target'],
    [{ tables: ['A'], targets: ['cache'] }, 'targets[0]: must be "replica" or "history"'],
    [{ tables: ['A'], priority: 'urgent' }, 'priority: must be low, medium or high'],
    [{ tables: ['A'], dataBoost: 'yes' }, 'dataBoost: must be true or false'],
    [{ tables: ['A'], maxPartitions: 0 }, 'maxPartitions: must be a whole number'],
    [{ tables: ['A'], readTimestamp: 'yesterday' }, 'readTimestamp:'],
    [{ tables: ['A'], extra: 1 }, 'extra'],
  ])('refuses %j', (body, message) => {
    expect(problems(body)).toContain(message);
  });

  it('refuses an oversized body before parsing it', () => {
    expect(problems({ tables: ['A'] }, MAX_REQUEST_BYTES + 1)).toContain(`the limit is ${MAX_REQUEST_BYTES}`);
  });
});

describe('mappedColumns', () => {
  it('keeps keys and watched columns in table order', () => {
    expect(mappedColumns(ORDERS, ['Amount'])).toEqual(['OrderId', 'Amount']);
    expect(mappedColumns(ORDERS, 'all')).toEqual(['OrderId', 'Customer', 'Amount', 'Secret']);
  });
});
