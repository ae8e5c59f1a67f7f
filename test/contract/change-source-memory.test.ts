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
