/**
 * The enricher over the in-memory dimension reader: as-of-commit gives each fact change the dimension row of
 * its own commit timestamp with one read per timestamp; latest serves the cache within its expiry; a missing
 * row gives NULLs, counted; only ABORTED, DEADLINE_EXCEEDED and UNAVAILABLE are retried.
 */
import { MemoryDimensionReader } from '../../shared/adapters/memory/dimension-reader';
import { Enricher, type FactRow } from '../../shared/app/enrichment/enricher';
import type { ResolvedLookup } from '../../shared/domain/enrichment/lookups';
import { fromNanos } from '../../shared/domain/timestamp';
import { ordersCustomersLookup } from '../unit/domain/support/orders-lookup';

const t = (n: number) => fromNanos(1_700_000_000_000_000_000n + BigInt(n));

const lookup = (mode: 'as-of-commit' | 'latest', cacheMissing = false): ResolvedLookup =>
  ordersCustomersLookup(
    ['Name', 'Segment'],
    mode,
    mode === 'latest' ? { maxSize: 2, expireAfterWriteMs: 1_000, cacheMissing } : undefined,
  );

const fact = (cust: string, at: number, region = 'eu'): FactRow => ({
  values: { OrderId: String(at), Region: region, CustId: cust },
  at: t(at),
});

function dims() {
  const reader = new MemoryDimensionReader();
  reader.write('Customers', ['eu', '1'], t(0), { Name: 'Ada', Segment: 'smb' });
  reader.write('Customers', ['eu', '2'], t(0), { Name: 'Bo', Segment: 'smb' });
  // Customer 1 moves to enterprise between two of their orders.
  reader.write('Customers', ['eu', '1'], t(50), { Name: 'Ada', Segment: 'enterprise' });
  return reader;
}

describe('as-of-commit enrichment', () => {
  it('gives each fact change the dimension row as it was at its own commit timestamp', async () => {
    const reader = dims();
    const e = new Enricher(lookup('as-of-commit'), { reader });
    const out = await e.enrich([fact('1', 10), fact('1', 60), fact('2', 60)]);
    expect(out).toEqual([
      { c_Name: 'Ada', c_Segment: 'smb' },
      { c_Name: 'Ada', c_Segment: 'enterprise' },
      { c_Name: 'Bo', c_Segment: 'smb' },
    ]);
    // One read per commit timestamp over its key set, never one per row; keys in declared key order.
    expect(reader.calls).toEqual([
      { table: 'Customers', keys: 1, at: t(10) },
      { table: 'Customers', keys: 2, at: t(60) },
    ]);
  });

  it('reads each distinct key once per timestamp', async () => {
    const reader = dims();
    const e = new Enricher(lookup('as-of-commit'), { reader });
    await e.enrich([fact('1', 10), fact('1', 10), fact('2', 10)]);
    expect(reader.calls).toEqual([{ table: 'Customers', keys: 2, at: t(10) }]);
  });

  it('a missing dimension row gives NULL columns, counted; a fact without a key value is unresolved', async () => {
    const reader = dims();
    const e = new Enricher(lookup('as-of-commit'), { reader });
    const out = await e.enrich([
      fact('9', 10),
      { values: { OrderId: '1', Region: 'eu', CustId: null }, at: t(10) },
    ]);
    expect(out).toEqual([
      { c_Name: null, c_Segment: null },
      { c_Name: null, c_Segment: null },
    ]);
    expect(e.stats()).toMatchObject({ rows: 2, missing: 1, unresolved: 1, reads: 1 });
    // A row read before the dimension row existed is missing too.
    expect(await e.enrich([{ ...fact('1', 0), at: fromNanos(1_000n) }])).toEqual([
      { c_Name: null, c_Segment: null },
    ]);
  });
});

describe('latest enrichment', () => {
  it('serves the cached row within the expiry, then reads the new one', async () => {
    const reader = new MemoryDimensionReader();
    reader.write('Customers', ['eu', '1'], t(0), { Name: 'Ada', Segment: 'smb' });
    let now = 0;
    const e = new Enricher(lookup('latest'), { reader, nowMs: () => now });
    expect(await e.enrich([fact('1', 10)])).toEqual([{ c_Name: 'Ada', c_Segment: 'smb' }]);
    reader.write('Customers', ['eu', '1'], t(20), { Name: 'Ada', Segment: 'enterprise' });
    now = 999;
    expect(await e.enrich([fact('1', 30)])).toEqual([{ c_Name: 'Ada', c_Segment: 'smb' }]);
    now = 1_000;
    expect(await e.enrich([fact('1', 40)])).toEqual([{ c_Name: 'Ada', c_Segment: 'enterprise' }]);
    expect(reader.calls.map((c) => c.at)).toEqual(['latest', 'latest']);
    expect(e.stats().cache).toMatchObject({ hits: 1, misses: 2, size: 1 });
  });

  it('bounds the cache and caches misses only when asked', async () => {
    const reader = dims();
    const e = new Enricher(lookup('latest'), { reader, nowMs: () => 0 });
    await e.enrich([fact('1', 1), fact('2', 1), fact('9', 1)]);
    await e.enrich([fact('9', 2)]);
    expect(reader.calls).toHaveLength(2); // the miss was not cached
    reader.write('Customers', ['us', '3'], t(0), { Name: 'Cy', Segment: 'smb' });
    await e.enrich([fact('3', 3, 'us')]);
    expect(e.stats().cache).toMatchObject({ size: 2, evictions: 1 });
    const remembering = new Enricher(lookup('latest', true), { reader: dims(), nowMs: () => 0 });
    await remembering.enrich([fact('9', 1)]);
    await remembering.enrich([fact('9', 2)]);
    expect(remembering.stats()).toMatchObject({ reads: 1, missing: 2 });
  });
});

describe('point-read retries', () => {
  it.each([
    [10, 'ABORTED'],
    [4, 'DEADLINE_EXCEEDED'],
    [14, 'UNAVAILABLE'],
  ])('retries code %i (%s) and succeeds', async (code) => {
    const reader = dims();
    reader.failNext.push({ code, message: 'injected' }, { code, message: 'injected' });
    const e = new Enricher(lookup('as-of-commit'), { reader, sleep: async () => {} });
    expect(await e.enrich([fact('1', 10)])).toEqual([{ c_Name: 'Ada', c_Segment: 'smb' }]);
    expect(e.stats()).toMatchObject({ reads: 3, retries: 2 });
  });

  it('does not retry RESOURCE_EXHAUSTED (the client already honours the server delay) nor other codes', async () => {
    for (const code of [8, 7, 3]) {
      const reader = dims();
      reader.failNext.push({ code, message: `code ${code}` });
      const e = new Enricher(lookup('as-of-commit'), { reader, sleep: async () => {} });
      await expect(e.enrich([fact('1', 10)])).rejects.toThrow(`lookup Orders.lookups[0] of Customers`);
      expect(e.stats()).toMatchObject({ reads: 1, retries: 0 });
    }
  });

  it('gives up after the attempts, with a retryable error for the window to be retried', async () => {
    const reader = dims();
    for (let i = 0; i < 5; i++) reader.failNext.push({ code: 14, message: 'down' });
    const e = new Enricher(lookup('as-of-commit'), { reader, sleep: async () => {} });
    await expect(e.enrich([fact('1', 10)])).rejects.toMatchObject({ kind: 'retryable' });
    expect(e.stats()).toMatchObject({ reads: 5, retries: 4 });
  });
});

describe('a dimension column retyped since the lookup was resolved', () => {
  it('fails the read naming lookup, table, column and both types when BigQuery cannot hold the new type', async () => {
    const reader = dims();
    reader.types.set('Customers', { Name: { code: 'STRING' }, Segment: { code: 'BYTES' } });
    const e = new Enricher(lookup('as-of-commit'), { reader });
    await expect(e.enrich([fact('1', 10)])).rejects.toMatchObject({
      kind: 'permanent',
      message: expect.stringMatching(
        /^lookup Orders\.lookups\[0\]: dimension table Customers column Segment changed type from STRING to BYTES, but its enriched column c_Segment/,
      ),
    });
  });

  it('takes a change BigQuery holds in the same column type, and drops the latest cache read before it', async () => {
    const enumLookup = lookup('latest');
    enumLookup.columns[1] = {
      source: 'Segment',
      target: 'c_Segment',
      type: 'ENUM<shop.Segment>',
      spannerType: { code: 'ENUM', protoTypeFqn: 'shop.Segment' },
    };
    const reader = new MemoryDimensionReader();
    reader.write('Customers', ['eu', '1'], t(0), { Name: 'Ada', Segment: '1' });
    reader.write('Customers', ['eu', '2'], t(0), { Name: 'Bo', Segment: '2' });
    const e = new Enricher(enumLookup, { reader, nowMs: () => 0 });
    expect(await e.enrich([fact('1', 10)])).toEqual([{ c_Name: 'Ada', c_Segment: '1' }]);
    // ALTER COLUMN Segment INT64 (ENUM ↔ INT64 is one BigQuery INT64 column), and the row changes.
    reader.types.set('Customers', { Name: { code: 'STRING' }, Segment: { code: 'INT64' } });
    reader.write('Customers', ['eu', '1'], t(20), { Name: 'Ada', Segment: '3' });
    expect(await e.enrich([fact('2', 30)])).toEqual([{ c_Name: 'Bo', c_Segment: '2' }]);
    // The read that saw the change dropped the cached row of customer 1: it is read again.
    expect(await e.enrich([fact('1', 40)])).toEqual([{ c_Name: 'Ada', c_Segment: '3' }]);
    expect(reader.calls).toHaveLength(3);
    // Its new type is the one held from now on: a later read reporting INT64 changes nothing.
    expect(await e.enrich([fact('2', 50)])).toEqual([{ c_Name: 'Bo', c_Segment: '2' }]);
  });
});
