/**
 * The sequence of a history table's rows after a position depends on which source tables feed it
 * (ADR-1605). When `SLUICE_TABLES` changes that set between a crash that left rows past the ledger's cursor
 * and the re-read, the re-read's row at an offset is not the row the crashed attempt put there: such a row
 * must never be counted as written. With no rows past the cursor the stream is replaced and rows flow on.
 */
import { addMillis } from '../../shared/domain/timestamp';
import { FlakyStore } from './support/flaky-store';
import { Harness } from './support/harness';

const ORDERS_ONLY = { Orders: { replica: 'orders', history: 'orders_history' }, Items: { replica: 'items' } };
const BOTH = {
  Orders: { replica: 'orders', history: 'orders_history' },
  Items: { replica: 'items', history: 'orders_history' },
};

/** Commits `n` transactions alternating Orders and Items, 2 ms apart, from `first` on. */
function commitAlternating(h: Harness, n: number, first: number): void {
  let at = addMillis(h.now, 1);
  for (let i = first; i < first + n; i++) {
    h.script.commit(at, [{ table: i % 2 === 0 ? 'Orders' : 'Items', id: i, val: `v${i}` }]);
    at = addMillis(at, 2);
  }
  h.now = addMillis(at, 10);
}

/** change_ids of the committed mods of `tables`. */
function committedIds(h: Harness, tables: string[]): string[] {
  return [...h.script.parts.values()]
    .flatMap((p) => p.records)
    .filter((r) => tables.includes(r.tableName))
    .flatMap((r) => r.mods.map((_m, i) => `${r.serverTransactionId}/${Number(r.recordSequence)}/${i}`))
    .sort();
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 2_000 && !condition(); i++) await new Promise((r) => setTimeout(r, 2));
  if (!condition()) throw new Error('condition not reached');
}

describe('history table fed by another set of source tables', () => {
  it('after a crash with rows past the cursor: fails loudly, never counts another row as written', async () => {
    const store = new FlakyStore();
    const h = new Harness({ roots: 1, store, config: { tables: ORDERS_ONLY } });
    commitAlternating(h, 10, 0);
    await h.tick();
    const task = h.queue.pending.shift()!;
    // The reader appends its Orders rows, then every ledger write hangs: it dies with rows past the cursor.
    store.hangWritesWhen = () => h.history.rows('orders_history').length > 0;
    void h.deliver(task);
    await until(() => h.history.rows('orders_history').length === 5);
    store.hangWritesWhen = null;
    const written = h.history.rows('orders_history').map((r) => r.change_id);

    // Items now feeds the same history table; the partition is read again from the ledger's position.
    h.reconfigure({ tables: BOTH });
    h.advance(61_000);
    h.queue.pending.push(task);
    await h.tick();
    await h.drain();

    const raw = h.history.rows('orders_history').map((r) => r.change_id);
    // Nothing was added on the strength of a row that is not there, nor written twice.
    expect(raw).toEqual(written);
    expect(raw.sort()).toEqual(committedIds(h, ['Orders']));
    const status = (await h.tick()).status!;
    expect(status.partitions.failed).toBe(1);
    const errors = h.events('history.sources-changed');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ severity: 'ERROR', destination: 'orders_history' });
    const { partition } = task.body as { partition: string };
    const entry = (await h.ledger.readPartition(0, partition))?.value;
    expect(entry?.state).toBe('failed');
    expect(entry?.lastError?.message).toMatch(/orders_history.*Orders.*Items,Orders/s);
  });

  it('with nothing past the cursor: replaces the stream and carries on exactly once', async () => {
    const h = new Harness({ roots: 1, config: { tables: ORDERS_ONLY } });
    commitAlternating(h, 6, 0);
    await h.tick();
    await h.drain();
    expect(h.history.rows('orders_history')).toHaveLength(3);

    h.reconfigure({ tables: BOTH });
    h.advance(6_000);
    commitAlternating(h, 6, 6);
    for (let i = 0; i < 3; i++) {
      await h.tick();
      await h.drain();
      h.advance(6_000);
    }
    const rows = h.history.rows('orders_history');
    const raw = rows.map((r) => r.change_id);
    expect(new Set(raw).size).toBe(raw.length);
    expect(raw.length).toBe(3 + 6);
    expect(raw).toEqual(expect.arrayContaining(committedIds(h, ['Orders'])));
    // Items rows from the change on: ids 7, 9, 11.
    const items = rows.filter((r) => r.table_name === 'Items').map((r) => JSON.parse(r.keys).Id);
    expect(items.sort()).toEqual(['11', '7', '9']);
    const rotated = h.events('history.stream-rotated');
    expect(rotated.map((e) => e.reason)).toEqual(['sources']);
    expect((await h.tick()).status!.partitions.failed).toBe(0);
  });
});
