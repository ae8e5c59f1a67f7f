/**
 * The size bound of a history row: never below the exact size (a row over the append limit must never pass
 * the bound), for text of every kind JSON escapes or UTF-8 widens, and close enough that real rows never need
 * the exact measure.
 */
import {
  type HistoryRow,
  historyRowBytes,
  historyRowBytesBound,
  MAX_HISTORY_ROW_BYTES,
} from '../../../shared/domain/history-rows';

function row(newValues: string, extra: Partial<HistoryRow> = {}): HistoryRow {
  return {
    commit_timestamp: '1714521600000000',
    commit_timestamp_ns: '2024-05-01T00:00:00.000000500Z',
    server_transaction_id: 'tx-1',
    record_sequence: '00000001',
    mod_index: '0',
    change_id: 'tx-1/1/0',
    table_name: 'Items',
    mod_type: 'INSERT',
    keys: '{"Id":"1"}',
    new_values: newValues,
    old_values: '{}',
    transaction_tag: '',
    number_of_records_in_transaction: '1',
    number_of_partitions_in_transaction: '1',
    value_capture_type: 'NEW_ROW_AND_OLD_VALUES',
    is_system_transaction: false,
    is_last_record_in_transaction_in_partition: true,
    ...extra,
  };
}

/** A seeded generator of strings mixing what JSON escapes and what UTF-8 widens. */
function strings(seed: number, count: number): string[] {
  let s = seed;
  const next = () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s;
  };
  const pieces = [
    'a',
    '"',
    '\\',
    '\n',
    '\u0001',
    '\u001f',
    'é',
    '€',
    '😀',
    '\ud800',
    '\udfff',
    '\u2028',
    ' ',
  ];
  return Array.from({ length: count }, () =>
    Array.from({ length: next() % 200 }, () => pieces[next() % pieces.length]).join(''),
  );
}

describe('historyRowBytesBound', () => {
  it('is never below the exact size, whatever the text holds', () => {
    for (const text of strings(7, 2_000)) {
      const r = row(text, { transaction_tag: text.slice(0, 20) });
      expect(historyRowBytesBound(r)).toBeGreaterThanOrEqual(historyRowBytes(r));
    }
  });

  it('is tight for the worst case: each control character escapes to exactly six bytes', () => {
    const worst = row('\u0001'.repeat(1_000));
    const empty = row('');
    expect(historyRowBytes(worst) - historyRowBytes(empty)).toBe(6_000);
    expect(historyRowBytesBound(worst) - historyRowBytesBound(empty)).toBe(6_000);
  });

  it('gives up (Infinity) on a value of another kind, so the caller measures it exactly', () => {
    const r = { ...row('{}'), extra: { nested: true } } as unknown as HistoryRow;
    expect(historyRowBytesBound(r)).toBe(Number.POSITIVE_INFINITY);
  });

  it('passes a row of ordinary size without measuring it, and leaves a near-limit row to the exact measure', () => {
    expect(historyRowBytesBound(row(JSON.stringify({ Name: 'x'.repeat(10_000) })))).toBeLessThan(
      MAX_HISTORY_ROW_BYTES,
    );
    const large = row('x'.repeat(Math.ceil(MAX_HISTORY_ROW_BYTES / 6)));
    expect(historyRowBytesBound(large)).toBeGreaterThan(MAX_HISTORY_ROW_BYTES);
    expect(historyRowBytes(large)).toBeLessThan(MAX_HISTORY_ROW_BYTES);
  });
});
