import { LedgerStore } from '../../shared/app/ledger/ledger-store';
import { LAG_HISTORY, type PipelineStatus, withLagSample } from '../../shared/app/ledger/status';
import { SluiceError } from '../../shared/domain/errors';
import { acquireLease, entriesFromChildPartitions, type PartitionEntry } from '../../shared/domain/ledger';
import { createLogger } from '../../shared/domain/log';
import { addMillis, formatTimestamp, parseTimestamp } from '../../shared/domain/timestamp';
import { FlakyStore } from './support/flaky-store';

const T = parseTimestamp('2026-01-01T00:00:00Z');
const fast = { attempts: 4, baseDelayMs: 1, maxDelayMs: 1, sleep: async () => undefined };

function setup() {
  const store = new FlakyStore();
  const lines: string[] = [];
  const ledger = new LedgerStore(
    store,
    'p1',
    createLogger((l) => lines.push(l)),
    fast,
  );
  return { store, ledger, lines };
}

function roots(n: number): PartitionEntry[] {
  const childPartitions = Array.from({ length: n }, (_, i) => ({
    token: `root-${i}`,
    parentPartitionTokens: [],
  }));
  return entriesFromChildPartitions(
    { kind: 'child-partitions', startTimestamp: T, recordSequence: '0', childPartitions },
    0,
  );
}

const lease = (holder: string) => (e: PartitionEntry, writer: string) =>
  acquireLease(e, { holder, now: T, durationMs: 60_000, writer });

describe('LedgerStore', () => {
  it('creates create-only: a second identical create is "exists", one object', async () => {
    const { ledger, store } = setup();
    const [e] = roots(1);
    expect(await ledger.createPartition(e!)).toBe('created');
    expect(await ledger.createPartition(e!)).toBe('exists');
    expect((await store.inner.list('p1/')).items).toHaveLength(1);
  });

  it('compare-and-swap: of two writers deciding from one generation, exactly one wins', async () => {
    const { ledger } = setup();
    const [e] = roots(1);
    await ledger.createPartition(e!);
    const read = (await ledger.readPartition(0, e!.id))!;
    const a = acquireLease(read.value, { holder: 'a', now: T, durationMs: 1000, writer: 'wa' });
    const b = acquireLease(read.value, { holder: 'b', now: T, durationMs: 1000, writer: 'wb' });
    const ga = await ledger.writePartition(a.ok ? a.entry : read.value, read.generation);
    const gb = await ledger.writePartition(b.ok ? b.entry : read.value, read.generation);
    expect(ga).toBeDefined();
    expect(gb).toBeUndefined();
    expect((await ledger.readPartition(0, e!.id))!.value.lease?.holder).toBe('a');
  });

  it('a 412 answering our own retried write is recognised as success (writer token)', async () => {
    const { ledger, store } = setup();
    const [e] = roots(1);
    await ledger.createPartition(e!);
    store.loseNextWriteResponse = true;
    const out = await ledger.updatePartition(0, e!.id, lease('a'));
    expect(out.kind).toBe('written');
    expect(store.inner.calls.write).toBe(2); // no second attempt was needed
  });

  it('a lost race re-reads and re-decides: the loser sees the lease held', async () => {
    const { ledger } = setup();
    const [e] = roots(1);
    await ledger.createPartition(e!);
    expect((await ledger.updatePartition(0, e!.id, lease('a'))).kind).toBe('written');
    const out = await ledger.updatePartition(0, e!.id, lease('b'));
    expect(out).toMatchObject({ kind: 'refused', refusal: 'lease-held' });
  });

  it('retries GCS 429 and 503 with backoff, and gives up after the bounded attempts', async () => {
    const { ledger, store } = setup();
    const [e] = roots(1);
    store.errors = [429, 503, 503];
    expect(await ledger.createPartition(e!)).toBe('created');
    store.errors = [503, 503, 503, 503, 503];
    await expect(ledger.readPartition(0, e!.id)).rejects.toMatchObject({ kind: 'retryable' });
    store.errors = [403];
    await expect(ledger.readPartition(0, e!.id)).rejects.toMatchObject({ kind: 'permanent' });
    expect(store.errors).toEqual([]);
  });

  it('refuses a corrupt entry, reports it, and never overwrites it', async () => {
    const { ledger, store, lines } = setup();
    const [e] = roots(1);
    await ledger.createPartition(e!);
    const name = ledger.paths.partition(0, e!.id);
    const obj = (await store.inner.read(name))!;
    const corrupt = Buffer.from(obj.data.toString().replace('"state":"ready"', '"state":"bogus"'));
    await store.inner.write(name, corrupt, { ifGeneration: obj.generation, metadata: obj.metadata });
    await expect(ledger.updatePartition(0, e!.id, lease('a'))).rejects.toThrow(SluiceError);
    await expect(ledger.readPartition(0, e!.id)).rejects.toThrow(/corrupt: state/);
    expect((await store.inner.read(name))!.data.equals(corrupt)).toBe(true);
    expect(lines.some((l) => l.includes('ledger.corrupt'))).toBe(true);
  });

  it('lists views from metadata only: 2,500 partitions in 3 list calls, no reads', async () => {
    const { ledger, store } = setup();
    for (const e of roots(2500)) await ledger.createPartition(e);
    const reads = store.inner.calls.read;
    const { partitions, calls, corrupt } = await ledger.listPartitions();
    expect(partitions).toHaveLength(2500);
    expect(calls).toBe(3);
    expect(corrupt).toEqual([]);
    expect(store.inner.calls.read).toBe(reads);
    expect(partitions[0]!.view.state).toBe('ready');
  });

  it('reports a partition with unreadable metadata in the listing', async () => {
    const { ledger, store } = setup();
    const [e] = roots(1);
    await store.inner.write(ledger.paths.partition(0, e!.id), Buffer.from('{}'), {
      ifGeneration: 0,
      metadata: { 'sluice-id': 'x' },
    });
    const { partitions, corrupt } = await ledger.listPartitions();
    expect(partitions).toEqual([]);
    expect(corrupt[0]!.message).toMatch(/corrupt/);
  });

  it('writes the manifest with compare-and-swap and recognises its own 412', async () => {
    const { ledger, store } = setup();
    const m = {
      format: 1 as const,
      pipeline: 'p1',
      stream: 's',
      dialect: 'GOOGLE_STANDARD_SQL' as const,
      start: T,
      epoch: 0,
      state: 'running' as const,
      reason: null,
      writer: 'w1',
    };
    store.loseNextWriteResponse = true;
    const g = await ledger.writeManifest(m, 0);
    expect(g).toBeDefined();
    expect(await ledger.writeManifest({ ...m, writer: 'w2' }, 0)).toBeUndefined();
    expect((await ledger.readManifest())!.value.start).toBe(T);
    expect(await ledger.writeStatus(statusAt(formatTimestamp(addMillis(T, 1)), 2))).toBe(true);
    expect(await ledger.readStatus()).toMatchObject({ pipeline: 'p', lagSeconds: 2 });
  });
});

function statusAt(updatedAt: string, lag: number | null): PipelineStatus {
  return {
    pipeline: 'p',
    state: 'running',
    reason: null,
    epoch: 0,
    stream: 'S',
    updatedAt,
    watermark: null,
    lagSeconds: lag,
    partitions: { waiting: 0, ready: 0, leased: 0, finished: 0, failed: 0, total: 0 },
    slowest: [],
    retention: null,
    lastErrors: [],
    listCalls: 1,
    tables: [],
  };
}

describe('the lag series of the status', () => {
  it('carries the previous samples forward, bounded in count and to the last six hours', () => {
    let previous: unknown;
    const start = Date.parse('2025-01-01T00:00:00Z');
    for (let i = 0; i < LAG_HISTORY.samples + 50; i++) {
      const at = `${new Date(start + i * 60_000).toISOString().slice(0, 19)}.000000001Z`;
      previous = withLagSample(previous, statusAt(at, i));
    }
    const series = (previous as PipelineStatus).lagHistory!;
    expect(series).toHaveLength(LAG_HISTORY.samples);
    expect(series.at(-1)).toEqual({
      at: '2025-01-01T06:49:00.000000001Z',
      lagSeconds: LAG_HISTORY.samples + 49,
    });
    // A tick hours later keeps only what is within six hours of it.
    const later = withLagSample(previous, statusAt('2025-01-01T12:00:00.000000000Z', 1));
    expect(later.lagHistory!.map((s) => s.at)).toEqual([
      ...series.filter((s) => s.at >= '2025-01-01T06:00').map((s) => s.at),
      '2025-01-01T12:00:00.000000000Z',
    ]);
    // A status without a watermark adds no sample; a garbled series is dropped, not trusted.
    expect(
      withLagSample({ lagHistory: [{ at: 1 }, 'x'] }, statusAt('2025-01-01T00:00:00Z', null)).lagHistory,
    ).toEqual([]);
  });
});
