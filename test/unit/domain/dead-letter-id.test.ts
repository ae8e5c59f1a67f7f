/** Dead-letter ids name their table: a named schema's table by its qualified name (ADR-1405). */
import type { DataChangeRecord } from '../../../shared/domain/change-record';
import {
  deadLetterId,
  deadLetterIdOf,
  deadLetterPrefix,
  isDeadLetterId,
} from '../../../shared/domain/dead-letter';
import { parseTimestamp } from '../../../shared/domain/timestamp';

const record = (tableName: string) =>
  ({
    tableName,
    commitTimestamp: parseTimestamp('2026-01-01T00:00:00.123456789Z'),
    serverTransactionId: 'tx',
    recordSequence: '00000001',
  }) as unknown as DataChangeRecord;

test.each(['Orders', 'sales.Orders', 'sales.orders'])(
  'the dead letter of a %s record has an id a replay and a listing accept',
  (table) => {
    const id = deadLetterId('p1', [record(table)]);
    expect(id.startsWith(`${table}/20260101T000000123456789Z-`)).toBe(true);
    expect(isDeadLetterId(id)).toBe(true);
    expect(deadLetterIdOf('demo', `${deadLetterPrefix('demo')}${id}.json`)).toBe(id);
  },
);

test('an id with more than one schema part, or none of the shape, is not a dead letter', () => {
  expect(isDeadLetterId('a.b.c/20260101T000000123456789Z-0123456789abcdef')).toBe(false);
  expect(isDeadLetterId('sales./20260101T000000123456789Z-0123456789abcdef')).toBe(false);
});
