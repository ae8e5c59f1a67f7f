/**
 * Stream options while the pipeline runs: a reader window that finds an option hiding changes stops the
 * pipeline (state `stopped`, a reason naming the option and the fix) instead of diverging; the scheduler's
 * tick does the same between windows, and resumes the pipeline once the option is off again. The status
 * lists the replicated tables with their column counts.
 */
import { Harness } from './support/harness';

async function started(): Promise<Harness> {
  const h = new Harness();
  await h.tick();
  return h;
}

describe('stream options while running', () => {
  it('a window stops the pipeline when an option starts hiding deletes', async () => {
    const h = await started();
    h.script.commit(h.now, [{ table: 'Orders', id: 1, val: 'a' }]);
    h.catalog.options = { ...h.catalog.options, raw: { exclude_delete: 'true' } };
    h.advance(1_000);
    await h.drain();
    expect(h.outcomes.some((o) => /pipeline stopped: .*exclude_delete = true/.test(o.detail))).toBe(true);
    const manifest = await h.ledger.readManifest();
    expect(manifest?.value.state).toBe('stopped');
    expect(manifest?.value.reason).toMatch(
      /exclude_delete = true: the stream does not record deletes.*SLUICE_ACCEPT_STREAM_OPTIONS=exclude_delete.*backfill/,
    );
    const report = await h.tick();
    expect(report.status).toMatchObject({
      state: 'stopped',
      reason: expect.stringMatching(/exclude_delete/),
    });
    expect(report.enqueued).toBe(0);
    expect(h.events('pipeline.stopped')).toHaveLength(1);
  });

  it('the tick resumes a pipeline stopped for its options once they are fixed, and it catches up', async () => {
    const h = await started();
    h.catalog.options = { ...h.catalog.options, raw: { allow_txn_exclusion: 'true' } };
    expect((await h.tick()).status?.state).toBe('stopped');
    h.script.commit(h.now, [{ table: 'Orders', id: 7, val: 'x' }]);
    h.catalog.options = { ...h.catalog.options, raw: { allow_txn_exclusion: 'false' } };
    const report = await h.tick();
    expect(report.status?.state).toBe('running');
    expect(h.events('pipeline.resumed')[0]).toMatchObject({ note: expect.stringMatching(/backfill/) });
    for (let i = 0; i < 20; i++) {
      h.advance(5_000);
      await h.drain();
      await h.tick();
    }
    expect(h.replica.rows('orders')).toEqual(h.expected('Orders'));
  });

  it('an accepted option neither stops nor refuses the pipeline', async () => {
    const h = new Harness({ config: { acceptStreamOptions: ['exclude_ttl_deletes'] } });
    h.catalog.options = { ...h.catalog.options, raw: { exclude_ttl_deletes: 'true' } };
    await h.tick();
    h.script.commit(h.now, [{ table: 'Items', id: 3, val: 'y' }]);
    h.advance(1_000);
    await h.drain();
    expect((await h.ledger.readManifest())?.value.state).toBe('running');
    expect(h.replica.rows('items')).toEqual(h.expected('Items'));
  });

  it('the status lists every replicated table with its targets and column count', async () => {
    const h = await started();
    const report = await h.tick();
    expect(report.status?.tables).toEqual([
      { source: 'Items', replica: 'items', history: null, columns: 2, state: 'replicating' },
      { source: 'Orders', replica: 'orders', history: 'orders_history', columns: 2, state: 'replicating' },
    ]);
  });

  it('keeps a dropped table in the status, and lists a watched table SLUICE_TABLES leaves out', async () => {
    const h = new Harness({ config: { tables: { Orders: { replica: 'orders' } } } });
    h.catalog.tables = ['Items', 'Orders', 'Audit'];
    await h.tick();
    h.catalog.tables = ['Items', 'Audit'];
    const report = await h.tick();
    expect(report.status?.tables).toEqual([
      expect.objectContaining({
        source: 'Audit',
        state: 'not-replicated',
        reason: expect.stringMatching(/not in SLUICE_TABLES/),
      }),
      expect.objectContaining({ source: 'Items', state: 'not-replicated' }),
      {
        source: 'Orders',
        replica: 'orders',
        history: null,
        columns: 2,
        state: 'dropped',
        reason: expect.stringMatching(/not in Spanner .*BigQuery tables, if any, are kept/),
      },
    ]);
  });
});
