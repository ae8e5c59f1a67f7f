/** The change-source contract against the in-memory source, driven by a small scripted partition model. */
import { createHash } from 'node:crypto';
import { MemoryChangeSource } from '../../shared/adapters/memory/change-source';
import type { DataChangeRecord, Dialect } from '../../shared/domain/change-record';
import { addNanos, fromEpochMillis, type Timestamp } from '../../shared/domain/timestamp';
import { type ChangeSourceHarness, changeSourceContract } from './change-source.contract';

function bucket(id: string, n: number): number {
  return createHash('sha256').update(id).digest()[0]! % n;
}

function memoryHarness(_dialect: Dialect): ChangeSourceHarness {
  const source = new MemoryChangeSource();
  let clock = fromEpochMillis(Date.now());
  const tick = (): Timestamp => {
    clock = addNanos(clock, 1_000_000n);
    return clock;
  };
  let live = ['p0', 'p1'];
  for (const t of live) source.addPartition(t, clock);
  let txn = 0;
  let generation = 0;
  return {
    source,
    table: 'Items',
    now: () => clock,
    async commit(rows) {
      const t = tick();
      txn += 1;
      const groups = new Map<string, typeof rows>();
      for (const row of rows) {
        const token = live[bucket(row.id, live.length)]!;
        groups.set(token, [...(groups.get(token) ?? []), row]);
      }
      let seq = 0;
      for (const [token, group] of groups) {
        const record: DataChangeRecord = {
          kind: 'data-change',
          commitTimestamp: t,
          recordSequence: String(seq++).padStart(8, '0'),
          serverTransactionId: `txn-${txn}`,
          isLastRecordInTransactionInPartition: true,
          tableName: 'Items',
          columnTypes: [],
          mods: group.map((r) => ({ keys: { Id: r.id }, newValues: { Value: r.value }, oldValues: {} })),
          modType: 'INSERT',
          valueCaptureType: 'OLD_AND_NEW_VALUES',
          numberOfRecordsInTransaction: groups.size,
          numberOfPartitionsInTransaction: groups.size,
          transactionTag: '',
          isSystemTransaction: false,
        };
        source.append(token, record);
      }
      return t;
    },
    async split() {
      const t = tick();
      const [ended, ...rest] = live;
      generation += 1;
      const children = [`g${generation}a`, `g${generation}b`];
      source.append(ended!, {
        kind: 'child-partitions',
        startTimestamp: t,
        recordSequence: '00000000',
        childPartitions: children.map((token) => ({ token, parentPartitionTokens: [ended!] })),
      });
      live = [...rest, ...children];
      return [ended!];
    },
    close: async () => {},
  };
}

changeSourceContract('in-memory', async (dialect) => memoryHarness(dialect));

describe('the in-memory source ends a partition as the service may', () => {
  const t0 = fromEpochMillis(Date.parse('2026-01-01T00:00:00Z'));
  const end = addNanos(t0, 5_000_000n);
  const childRecord = (sequence: number, token: string, parents: string[]) => ({
    kind: 'child-partitions' as const,
    startTimestamp: end,
    recordSequence: String(sequence).padStart(8, '0'),
    childPartitions: [{ token, parentPartitionTokens: parents }],
  });
  const tokensRead = async (source: MemoryChangeSource, token: string, to: Timestamp) => {
    const out: string[] = [];
    for await (const r of source.read({ partitionToken: token, from: t0, to, heartbeatMs: 1_000 }))
      if (r.kind === 'child-partitions') out.push(...r.childPartitions.map((c) => c.token));
    return out;
  };

  it('delivers a split reported as several child-partitions records at one timestamp, every one of them', async () => {
    const source = new MemoryChangeSource();
    source.addPartition('p', t0);
    source.append('p', childRecord(0, 'a', ['p']));
    source.append('p', childRecord(1, 'b', ['p']));
    expect(await tokensRead(source, 'p', addNanos(end, 1_000_000n))).toEqual(['a', 'b']);
    expect(await tokensRead(source, 'p', end)).toEqual(['a', 'b']);
  });

  it('has each parent of a merge announce the same child', async () => {
    const source = new MemoryChangeSource();
    source.addPartition('p', t0);
    source.addPartition('q', t0);
    source.append('p', childRecord(0, 'm', ['p', 'q']));
    source.append('q', childRecord(0, 'm', ['p', 'q']));
    expect(await tokensRead(source, 'p', end)).toEqual(['m']);
    expect(await tokensRead(source, 'q', end)).toEqual(['m']);
    expect(source.tokens()).toEqual(['p', 'q', 'm']);
  });
});
