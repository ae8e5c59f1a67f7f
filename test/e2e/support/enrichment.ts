/**
 * The enrichment stack of the end-to-end tests, both dialects: Orders replicated with an as-of-commit lookup
 * of its customer (`customer_`) and a latest one (`now_`); Shipments with a lookup of Windows keyed on
 * BYTES + TIMESTAMP (`window_`). A test may add lookups to Orders and functions' variables.
 */
import { PreciseDate } from '@google-cloud/precise-date';
import type { Database, Transaction } from '@google-cloud/spanner';
import type { DemoTable } from '../../../local/demo-schema';
import { type LocalStack, startLocalStack } from '../../../local/stack';
import type { Dialect } from '../../../shared/domain/change-record';
import { parseTimestamp, type Timestamp } from '../../../shared/domain/timestamp';
import { TEST_STACK } from './local-stack';

/** A value as the clients hand it back (Big, Numeric, strings), as comparable text; NULL as null. */
export function text(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  const inner = (v as { value?: unknown }).value;
  return String(inner ?? v).replace(/\.0+$/, '');
}

/** Runs one read-write transaction; its commit timestamp. */
export async function commit(db: Database, write: (tx: Transaction) => void): Promise<Timestamp> {
  return db.runTransactionAsync(async (tx) => {
    write(tx);
    const [response] = await tx.commit();
    const ts = response.commitTimestamp as { seconds: string | number; nanos: number };
    return parseTimestamp(new PreciseDate({ seconds: Number(ts.seconds), nanos: ts.nanos }).toISOString());
  });
}

/** Ticks every 500 ms until the pipeline has caught up with `last`; no error on the way. */
export async function catchUp(stack: LocalStack, last: Timestamp): Promise<void> {
  stack.startTicking(500);
  const caughtUp = await stack.waitForCatchUp(last, 40_000);
  expect(stack.errors).toEqual([]);
  expect(caughtUp).toBe(true);
}

/** A table name in the dialect's case. */
export const tableName = (dialect: Dialect, name: string): string =>
  dialect === 'POSTGRESQL' ? name.toLowerCase() : name;

/** `SLUICE_TABLES` of the enrichment stack, with `orderLookups` after Orders' two. */
function tablesConfig(dialect: Dialect, orderLookups: unknown[]): Record<string, unknown> {
  const n = (name: string) => tableName(dialect, name);
  return {
    '*': { replica: true, history: true },
    [n('Orders')]: {
      replica: 'orders',
      history: 'orders_history',
      lookups: [
        {
          table: n('Customers'),
          key: { customer_id: 'customer_id' },
          columns: ['name', 'balance'],
          prefix: 'customer_',
        },
        {
          table: n('Customers'),
          key: { customer_id: 'customer_id' },
          columns: ['name'],
          prefix: 'now_',
          mode: 'latest',
          cache: { maxSize: 100, expireAfterWriteMs: 1 },
        },
        ...orderLookups,
      ],
    },
    [n('Shipments')]: {
      replica: 'shipments',
      history: 'shipments_history',
      lookups: [
        {
          table: n('Windows'),
          key: { starts_at: 'starts_at', code: 'code' },
          columns: ['label'],
          prefix: 'window_',
        },
      ],
    },
  };
}

function extraTables(dialect: Dialect): DemoTable[] {
  const n = (name: string) => tableName(dialect, name);
  return [
    {
      name: n('Windows'),
      key: ['code', 'starts_at'],
      columns: [
        { name: 'code', kind: 'bytes', nullable: false },
        { name: 'starts_at', kind: 'timestamp', nullable: false },
        { name: 'label', kind: 'string', nullable: true },
      ],
      replica: null,
      history: null,
    },
    {
      name: n('Shipments'),
      key: ['shipment_id'],
      columns: [
        { name: 'shipment_id', kind: 'string', nullable: false },
        { name: 'starts_at', kind: 'timestamp', nullable: true },
        { name: 'code', kind: 'bytes', nullable: true },
      ],
      replica: 'shipments',
      history: 'shipments_history',
    },
  ];
}

/** Starts the enrichment stack (no partition churn). */
export function startEnrichmentStack(
  dialect: Dialect,
  options: { orderLookups?: unknown[]; functionEnv?: Record<string, string> } = {},
): Promise<LocalStack> {
  return startLocalStack({
    ...TEST_STACK,
    dialect,
    churnMs: 0,
    extraTables: extraTables(dialect),
    functionEnv: {
      SLUICE_TABLES: JSON.stringify(tablesConfig(dialect, options.orderLookups ?? [])),
      ...options.functionEnv,
    },
  });
}
