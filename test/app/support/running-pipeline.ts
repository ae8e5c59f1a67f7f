/**
 * An in-memory pipeline that has replicated its first rows (`Orders` 1 and `Items` 2), for the tests of a
 * BigQuery table deleted or forgotten under it. Every tick is a new scheduler and every task a new reader
 * (cold starts), unless a test keeps a scheduler of its own.
 */
import { MemoryHistorySink, MemoryReplicaSink } from '../../../shared/adapters/memory/sinks';
import { addMillis } from '../../../shared/domain/timestamp';
import { Harness, T0 } from './harness';
import { settle } from './settle';

/** The `Id`s of replica rows, sorted. */
export const ids = (rows: Array<Record<string, unknown>>): string[] => rows.map((r) => String(r.Id)).sort();

/** A pipeline whose replica holds `Orders` 1, with its sinks. */
export async function running(): Promise<{
  h: Harness;
  replica: MemoryReplicaSink;
  history: MemoryHistorySink;
}> {
  const replica = new MemoryReplicaSink();
  const history = new MemoryHistorySink();
  const h = new Harness({ replicaSink: replica, historySink: history });
  h.script.commit(addMillis(T0, 100), [
    { table: 'Orders', id: 1, val: 'a' },
    { table: 'Items', id: 2, val: 'b' },
  ]);
  h.now = addMillis(T0, 1_000);
  await settle(h);
  if (ids(replica.rows('orders')).join() !== '1') throw new Error('the pipeline did not replicate Orders 1');
  return { h, replica, history };
}
