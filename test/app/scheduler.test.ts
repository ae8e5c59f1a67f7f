/** Scheduler: first-run validation, start, concurrent ticks, status, completeness, retention. */
import { addMillis, formatTimestamp } from '../../shared/domain/timestamp';
import { Harness, T0 } from './support/harness';

/** A refused configuration stops the pipeline: the tick resolves with status stopped and the reason. */
async function stoppedReason(h: Harness): Promise<string> {
  const report = await h.tick();
  expect(report.status?.state).toBe('stopped');
  expect(await h.ledger.readManifest()).toBeUndefined();
  return report.status?.reason ?? '';
}

describe('scheduler first run', () => {
  it('refuses a missing stream, naming the fix', async () => {
    const h = new Harness();
    h.catalog.scope = undefined;
    expect(await stoppedReason(h)).toMatch(/change stream Changes does not exist.*CREATE CHANGE STREAM/);
  });

  it('refuses a stream that does not watch a configured table', async () => {
    const h = new Harness();
    h.catalog.scope = { all: false, tables: new Map([['Orders', { columns: 'all' as const }]]) };
    expect(await stoppedReason(h)).toMatch(/table Items is not watched by Changes/);
  });

  it('accepts a capture type without full rows for replicas, warning that rows are read at commit', async () => {
    const h = new Harness();
    h.catalog.options = { ...h.catalog.options, valueCaptureType: 'NEW_VALUES' };
    await expect(h.tick()).resolves.toBeDefined();
    expect(h.events('stream.capture-type')[0]).toMatchObject({
      severity: 'WARNING',
      valueCaptureType: 'NEW_VALUES',
      note: expect.stringMatching(/version_retention_period/),
    });
  });

  it('refuses a stream that hides deletes or transactions, naming each option and both fixes', async () => {
    const h = new Harness();
    h.catalog.options = {
      ...h.catalog.options,
      raw: { exclude_delete: 'true', allow_txn_exclusion: 'TRUE', exclude_insert: 'false' },
    };
    const err = await h.tick().then(
      () => undefined,
      (e: unknown) => e as Error & { kind?: string },
    );
    expect(err?.kind).toBe('permanent');
    expect(err?.message).toMatch(
      /exclude_delete = true: .*deleted rows would stay in the replica.*ALTER CHANGE STREAM Changes SET OPTIONS \(exclude_delete = false\), or accept it with SLUICE_ACCEPT_STREAM_OPTIONS=exclude_delete/,
    );
    expect(err?.message).toMatch(/allow_txn_exclusion = true: /);
    expect(err?.message).not.toMatch(/exclude_insert/);
  });

  it('accepts an option the configuration accepts on purpose, and logs the validated options', async () => {
    const h = new Harness({ config: { acceptStreamOptions: ['exclude_ttl_deletes'] } });
    h.catalog.options = { ...h.catalog.options, raw: { exclude_ttl_deletes: 'true' } };
    await expect(h.tick()).resolves.toBeDefined();
    expect(h.events('stream.validated')[0]).toMatchObject({
      options: { exclude_ttl_deletes: 'true' },
      hidingAccepted: ['exclude_ttl_deletes'],
    });
  });

  it('accepts NEW_VALUES when only history tables are configured', async () => {
    const h = new Harness({ config: { tables: { Orders: { history: 'orders_history' } } } });
    h.catalog.options = { ...h.catalog.options, valueCaptureType: 'NEW_VALUES' };
    await expect(h.tick()).resolves.toBeDefined();
  });

  it('refuses MUTABLE_KEY_RANGE clearly', async () => {
    const h = new Harness();
    h.catalog.options = { ...h.catalog.options, partitionMode: 'MUTABLE_KEY_RANGE' };
    expect(await stoppedReason(h)).toMatch(/MUTABLE_KEY_RANGE is not supported yet/);
  });

  it('logs the watch scope, creates the tables, the first partitions and the manifest, and enqueues them', async () => {
    const h = new Harness();
    const report = await h.tick();
    expect(h.events('stream.validated')[0]).toMatchObject({
      valueCaptureType: 'NEW_ROW',
      retentionSeconds: 86400,
    });
    expect(h.replica.ensured.sort()).toEqual(['items', 'orders']);
    expect(h.history.ensured).toEqual(['orders_history']);
    const manifest = (await h.ledger.readManifest())!.value;
    expect(manifest).toMatchObject({ state: 'running', epoch: 0, start: T0 });
    expect(report.status!.partitions).toMatchObject({ ready: 2, total: 2 });
    expect(h.queue.pending).toHaveLength(2);
    expect(h.events('scheduler.tick')[0]).toHaveProperty('lagSeconds');
  });
});

describe('scheduler ticks', () => {
  it('two concurrent ticks are harmless: one manifest, one task per partition', async () => {
    const h = new Harness();
    await Promise.all([h.tick(), h.tick()]);
    await Promise.all([h.tick(), h.tick()]);
    const { partitions } = await h.ledger.listPartitions();
    const manifest = (await h.ledger.readManifest())!.value;
    const current = partitions.filter((p) => p.view.epoch === manifest.epoch);
    expect(current).toHaveLength(2);
    expect(new Set(h.queue.pending.map((t) => (t.body as { partition: string }).partition)).size).toBe(
      h.queue.pending.length,
    );
  });

  it('writes status and completeness per source table, and removes finished partitions once children started', async () => {
    const h = new Harness();
    h.now = addMillis(T0, 1_000);
    await h.tick();
    await h.drain();
    h.script.split(addMillis(T0, 2_000), h.script.roots[0]!);
    for (let i = 0; i < 4; i++) {
      h.advance(6_000);
      await h.tick();
      await h.drain();
    }
    const status = (await h.ledger.readStatus()) as { partitions: Record<string, number>; watermark: string };
    expect(status.partitions.finished).toBe(0); // removed after its children started
    expect(status.partitions.total).toBe(3);
    expect(h.completeness.latest.get('Orders->orders')).toBeDefined();
    expect(h.completeness.latest.get('Orders->orders_history')).toBeDefined();
    expect(formatTimestamp(h.completeness.latest.get('Items->items')!)).toBe(status.watermark);
  });

  it('warns retention.danger within the margin', async () => {
    const h = new Harness();
    h.catalog.options = { ...h.catalog.options, retentionSeconds: 7_200 };
    await h.tick();
    h.advance(4_000_000); // watermark ~67 min old: within the 60 min margin of 2 h
    const report = await h.tick();
    expect(h.events('retention.danger')).toHaveLength(1);
    expect(report.status!.retention).toMatchObject({ danger: true, seconds: 7_200 });
  });

  it('on expiry stops with a clear error by default', async () => {
    const h = new Harness();
    h.catalog.options = { ...h.catalog.options, retentionSeconds: 3_600 };
    await h.tick();
    h.queue.drain();
    h.advance(3_700_000);
    const report = await h.tick();
    expect(report.status!.state).toBe('stopped');
    expect(report.status!.reason).toMatch(
      /older than the stream's retention.*SLUICE_RETENTION_FALLBACK=restart/,
    );
    expect(h.events('pipeline.failed')).toHaveLength(1);
    expect(h.queue.pending).toHaveLength(0);
    expect((await h.tick()).status!.state).toBe('stopped');
  });

  it('on expiry with fallback restart starts a new epoch at now and logs the lost interval', async () => {
    const h = new Harness({ config: { retentionFallback: 'restart' } });
    h.catalog.options = { ...h.catalog.options, retentionSeconds: 3_600 };
    await h.tick();
    h.queue.drain();
    h.advance(3_700_000);
    await h.tick();
    const manifest = (await h.ledger.readManifest())!.value;
    expect(manifest).toMatchObject({ epoch: 1, state: 'running', start: h.now });
    expect(h.events('retention.restart')[0]).toMatchObject({ lost: { to: formatTimestamp(h.now) } });
    const next = await h.tick();
    expect(next.status!.epoch).toBe(1);
    const { partitions } = await h.ledger.listPartitions();
    expect(partitions.every((p) => p.view.epoch === 1)).toBe(true); // old epoch removed
  });
});
