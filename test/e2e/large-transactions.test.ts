/**
 * Large transactions on the local stack: a commit of about 100 MiB (cells near the 10 MiB limit, on the wire)
 * and one of 80,000 mutations (the service's limit) replicate completely — every row in the replica, every
 * mod in the history — and the history's transaction counts tell a complete transaction in SQL.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { createHash } from 'node:crypto';
import type { DemoTable } from '../../local/demo-schema';
import { LOCAL } from '../../local/stack-config';
import { fromSecondsAndNanos } from '../../shared/domain/timestamp';
import { useLocalStack } from './support/local-stack';

const MiB = 1024 * 1024;
const blobs: DemoTable = {
  name: 'Blobs',
  key: ['Id'],
  columns: [
    { name: 'Id', kind: 'int', nullable: false },
    { name: 'B', kind: 'bytes', nullable: true },
  ],
  replica: 'blobs',
  history: 'blobs_history',
};
const wide: DemoTable = {
  name: 'Many',
  key: ['Id'],
  columns: [
    { name: 'Id', kind: 'int', nullable: false },
    ...[1, 2, 3, 4].map((i) => ({ name: `C${i}`, kind: 'string' as const, nullable: true })),
  ],
  replica: 'many',
  history: 'many_history',
};

const stack = useLocalStack({ churnMs: 0, extraTables: [blobs, wide] }, async () => {
  expect((await stack.tick()).status).toBe(200);
});

/**
 * What the query of docs/types.md computes ("complete transactions"), over the history rows: per transaction,
 * the distinct record sequences seen against `number_of_records_in_transaction`.
 */
function transactions(rows: Array<Record<string, unknown>>) {
  const byTxn = new Map<string, { expected: number; seqs: Set<string>; partitions: number }>();
  for (const r of rows) {
    const t = byTxn.get(String(r.server_transaction_id)) ?? {
      expected: Number(r.number_of_records_in_transaction),
      seqs: new Set<string>(),
      partitions: Number(r.number_of_partitions_in_transaction),
    };
    t.seqs.add(String(r.record_sequence));
    byTxn.set(String(r.server_transaction_id), t);
  }
  return [...byTxn.values()].map((t) => ({
    expected: t.expected,
    seen: t.seqs.size,
    partitions: t.partitions,
  }));
}

async function commit(rows: Array<Record<string, string>>, table: string) {
  const [response] = await stack.database.table(table).insert(rows);
  const ts = (response as { commitTimestamp?: { seconds?: unknown; nanos?: unknown } }).commitTimestamp;
  return fromSecondsAndNanos(String(ts?.seconds ?? 0), Number(ts?.nanos ?? 0));
}

test('a commit of about 100 MiB and one of 80,000 mutations replicate completely', async () => {
  // 7 cells of 10 MiB: 70 MiB of data, 93 MiB on the wire (BYTES travel in base64).
  const big = [1, 2, 3, 4, 5, 6, 7].map((id) => ({
    Id: String(id),
    B: Buffer.alloc(10 * MiB, id).toString('base64'),
  }));
  await commit(big, blobs.name);
  // 16,000 rows of 5 columns: 80,000 mutations.
  const many = Array.from({ length: 16_000 }, (_, i) => ({
    Id: String(i),
    C1: `a${i}`,
    C2: `b${i}`,
    C3: `c${i}`,
    C4: `d${i}`,
  }));
  const last = await commit(many, wide.name);
  stack.startTicking(500);
  // About 100 s on an idle machine, several minutes when other suites share the cores: the wait is for the
  // watermark, bounded only so that a stuck pipeline fails inside the test's own time (with its state shown).
  const caughtUp = await stack.waitForCatchUp(last, 420_000);
  await stack.stopTicking();
  expect({ caughtUp, progress: stack.progress(), errors: stack.errors.slice(0, 2) }).toMatchObject({
    caughtUp: true,
  });

  const replica = stack.emulators.bigquery.admin.tableRows(LOCAL.dataset, 'blobs');
  const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  expect(replica.map((r) => digest(r.B as Buffer)).sort()).toEqual(
    big.map((r) => digest(Buffer.from(r.B, 'base64'))).sort(),
  );
  expect(stack.emulators.bigquery.admin.tableRows(LOCAL.dataset, 'many')).toHaveLength(16_000);

  // The history: every mod, and each transaction complete by its own counts.
  for (const [table, mods] of [
    ['blobs_history', 7],
    ['many_history', 16_000],
  ] as const) {
    expect(stack.emulators.bigquery.admin.tableRows(LOCAL.dataset, table)).toHaveLength(mods);
    const [txn, ...others] = transactions(stack.emulators.bigquery.admin.tableRows(LOCAL.dataset, table));
    expect(others).toHaveLength(0);
    expect(txn?.seen).toBe(txn?.expected);
    expect(txn?.expected).toBeGreaterThan(1);
    expect(txn?.partitions).toBeGreaterThanOrEqual(1);
  }
}, 480_000);
