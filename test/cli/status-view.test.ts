/**
 * The human status of fields a running local stack rarely shows at the moment of a call: a lease past its
 * expiry (`stalled`, ADR-1511), retention in danger and a stopped pipeline, as `GET /status` documents them
 * (docs/operating.md, "What `GET /status` shows").
 */
import { formatStatus, statusProblems } from '../../cli/status-view';

const running = {
  pipeline: 'sluice',
  state: 'running',
  reason: null,
  partitions: { waiting: 0, ready: 1, leased: 0, finished: 3, failed: 0, total: 4 },
  tables: [
    { source: 'Orders', replica: 'orders', history: 'orders_history', columns: 6, state: 'replicating' },
  ],
};

it('says healthy when nothing is wrong', () => {
  expect(statusProblems(running)).toEqual([]);
  expect(formatStatus(running)).toMatch(
    /table {5}Orders → orders, orders_history {2}replicating \(6 columns\)\nhealthy$/,
  );
});

it('prints a stalled lease, retention in danger and a stopped pipeline, each as a problem', () => {
  const status = {
    ...running,
    state: 'stopped',
    reason: 'change stream DemoChanges cannot be replicated:\n- table Nope is not in the database',
    stalled: [
      { partition: 'p1', holder: 'reader-7', leaseExpiredAt: '2026-01-01T00:00:00Z', secondsPastLease: 12.5 },
    ],
    retention: { seconds: 86400, marginSeconds: 3600, danger: true },
  };
  const out = formatStatus(status);
  expect(out).toContain('  stalled   p1  held by reader-7, lease expired 12.5 s ago');
  expect(out).toContain('IN DANGER');
  expect(out).toContain('- table Nope is not in the database');
  expect(statusProblems(status)).toEqual([
    'pipeline stopped: change stream DemoChanges cannot be replicated:\n- table Nope is not in the database',
    '1 stalled lease',
    'change-stream retention in danger',
  ]);
});

it('counts pending writer letters as a problem and names them apart from the stream records', () => {
  const status = {
    ...running,
    deadLetters: {
      pending: 1,
      pendingRecords: 0,
      replayed: 0,
      discarded: 2,
      writer: { pending: 1, discarded: 1 },
      byTable: {},
      byReason: {},
      truncated: false,
    },
  };
  expect(statusProblems(status)).toEqual(['1 dead letter pending (npx sluice dead-letters list)']);
  expect(formatStatus(status)).toContain(
    '  dead letters 1 pending; writer 1 (npx sluice dead-letters list); 0 replayed, 3 discarded',
  );
});
