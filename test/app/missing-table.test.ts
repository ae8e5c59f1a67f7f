/**
 * A configured table the database lacks stops the pipeline with a reason (status written, `GET /status`
 * answers it), instead of failing every tick without a status; after the fix the next tick starts it.
 */
import { Harness } from './support/harness';

describe('a configured table the database lacks', () => {
  it('stops the pipeline with a reason naming the table and the fix; the tick after the fix starts it', async () => {
    const h = new Harness({
      config: { tables: { Orders: { replica: 'orders' }, Payments: { replica: 'payments' } } },
    });
    h.catalog.missing.add('Payments');
    const report = await h.tick();
    expect(report.status).toMatchObject({ state: 'stopped', partitions: { total: 0 } });
    expect(report.status!.reason).toMatch(
      /table Payments does not exist in database db: create it, or remove it from SLUICE_TABLES/,
    );
    expect(await h.ledger.readStatus()).toMatchObject({ state: 'stopped' });
    expect(await h.ledger.readManifest()).toBeUndefined();
    expect(h.events('pipeline.failed')).toHaveLength(1);
    // Every tick says so again (no silent 503 loop), and nothing is enqueued.
    expect((await h.tick()).status!.state).toBe('stopped');
    expect(h.queue.pending).toHaveLength(0);
    h.catalog.missing.clear();
    const fixed = await h.tick();
    expect(fixed.status).toMatchObject({ state: 'running', reason: null });
    expect(h.queue.pending.length).toBeGreaterThan(0);
  });
});
