/**
 * The round trip on the running local stack: mutations posted to the writer function land in Spanner, the
 * change stream carries them, and the pipeline brings them to the BigQuery replica (and history) — every
 * demo column type, inserts, updates and deletes, both dialects; then BigQuery must equal Spanner.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { ColumnKind, DemoTable } from '../../local/demo-schema';
import type { LocalStack } from '../../local/stack';
import { LOCAL } from '../../local/stack-config';
import type { Dialect } from '../../shared/domain/change-record';
import { fromNanos } from '../../shared/domain/timestamp';
import { useLocalStack } from './support/local-stack';

/** A value of each demo column kind in the writer's JSON form. */
function value(kind: ColumnKind, n: number): unknown {
  switch (kind) {
    case 'int':
      return String(9_007_199_254_740_993n + BigInt(n));
    case 'string':
      return `writer ${n} — ünïcode`;
    case 'numeric':
      return `${n}.125`;
    case 'float':
      return n + 0.5;
    case 'bool':
      return n % 2 === 0;
    case 'date':
      return `2024-02-${String((n % 28) + 1).padStart(2, '0')}`;
    case 'timestamp':
      return `2024-03-01T12:00:00.${String(n).padStart(9, '0')}Z`;
    case 'bytes':
      return Buffer.from([n, 0, 255]).toString('base64');
    case 'json':
      return { n, nested: { ok: true, list: [1, 'two', null] } };
    case 'strings':
      // No NULL elements: BigQuery arrays cannot hold them (ADR-104), so the replica would differ by design.
      return ['a', `b${n}`, ''];
  }
}

function row(t: DemoTable, n: number): Record<string, unknown> {
  return Object.fromEntries(t.columns.map((c) => [c.name, value(c.kind, n)]));
}

async function post(
  stack: LocalStack,
  mutations: unknown[],
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${stack.functions.writer?.url}/mutations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mutations }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  'writer → Spanner → change stream → BigQuery, %s',
  (dialect) => {
    const stack = useLocalStack({ dialect, churnMs: 0 });

    it('posted mutations reach the replica and the history; BigQuery equals Spanner', async () => {
      expect((await stack.tick()).status).toBe(200);
      stack.startTicking(500);
      const { customers, orders } = stack.schema;
      const first = await post(stack, [
        ...[1, 2, 3, 4].map((n) => ({ op: 'insert', table: customers.name, row: row(customers, n) })),
        ...[1, 2].map((n) => ({ op: 'insertOrUpdate', table: orders.name, row: row(orders, n) })),
      ]);
      expect(first).toMatchObject({ status: 200, body: { applied: 6, failed: 0 } });
      const second = await post(stack, [
        {
          op: 'update',
          table: customers.name,
          row: { customer_id: value('int', 2), name: 'renamed by the writer', score: null },
        },
        { op: 'delete', table: customers.name, key: [value('int', 3)] },
        { op: 'replace', table: orders.name, row: row(orders, 2) },
      ]);
      expect(second).toMatchObject({ status: 200, body: { applied: 3 } });
      const caughtUp = await stack.waitForCatchUp(fromNanos(stack.emulators.spanner.admin.nowNs()), 30_000);
      await stack.stopTicking();
      expect(caughtUp).toBe(true);
      expect(stack.errors).toEqual([]);
      const verdict = await stack.verify();
      if (!verdict.equal) console.error(JSON.stringify(verdict, null, 2).slice(0, 4000));
      expect(verdict.equal).toBe(true);
      const replica = stack.emulators.bigquery.admin.tableRows(LOCAL.dataset, 'customers') as Array<
        Record<string, unknown>
      >;
      expect(replica.map((r) => String(r.name)).sort()).toEqual([
        'renamed by the writer',
        'writer 1 — ünïcode',
        'writer 4 — ünïcode',
      ]);
      const history = stack.emulators.bigquery.admin.tableRows(LOCAL.dataset, 'customers_history') as Array<
        Record<string, unknown>
      >;
      expect(history.map((r) => r.mod_type).sort()).toEqual([
        'DELETE',
        'INSERT',
        'INSERT',
        'INSERT',
        'INSERT',
        'UPDATE',
      ]);
    }, 60_000);
  },
);
