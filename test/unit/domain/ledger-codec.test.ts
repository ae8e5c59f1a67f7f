import {
  entriesFromChildPartitions,
  fromMetadata,
  ledgerPaths,
  type Manifest,
  METADATA_LIMIT_BYTES,
  metadataSize,
  nextEpoch,
  type PartitionEntry,
  parseEntry,
  parseManifest,
  partitionId,
  partitionIdFromName,
  serializeEntry,
  serializeManifest,
  toMetadata,
  viewOf,
} from '../../../shared/domain/ledger';
import { addNanos, parseTimestamp } from '../../../shared/domain/timestamp';

const T = parseTimestamp('2024-01-31T12:00:00.000000001Z');
const [entry] = entriesFromChildPartitions(
  {
    kind: 'child-partitions',
    startTimestamp: T,
    recordSequence: '0',
    childPartitions: [{ token: 'child', parentPartitionTokens: ['p1', 'p2'] }],
  },
  2,
);
const finished: PartitionEntry = {
  ...entry!,
  state: 'finished',
  end: addNanos(T, 10n),
  childTokens: ['c'],
  childIds: [partitionId('c')],
  lastError: { kind: 'retryable', message: 'UNAVAILABLE', at: T },
  writer: 'w-1',
};
const leased: PartitionEntry = { ...entry!, state: 'ready', writer: 'w' };

describe('entry JSON', () => {
  it('round-trips with timestamps as RFC 3339 strings', () => {
    const text = serializeEntry(finished);
    expect(JSON.parse(text)).toMatchObject({
      start: '2024-01-31T12:00:00.000000001Z',
      end: '2024-01-31T12:00:00.000000011Z',
    });
    expect(parseEntry(text)).toEqual(finished);
    const withLease = { ...leased, state: 'leased' as const, lease: { holder: 'h', expiresAt: T } };
    expect(parseEntry(serializeEntry(withLease))).toEqual(withLease);
  });

  it('names every problem of a corrupt object instead of defaulting', () => {
    const raw = JSON.parse(serializeEntry(finished));
    const bad = { ...raw, position: 'yesterday', state: 'gone', counters: { ...raw.counters, leases: -1 } };
    expect(() => parseEntry(JSON.stringify(bad), 'orders/partitions/e2/x.json')).toThrow(
      /orders\/partitions\/e2\/x.json is corrupt: .*state: .*position: invalid timestamp "yesterday".*counters.leases/,
    );
    expect(() => parseEntry('{"format":1', 'x')).toThrow(/x is not valid JSON/);
    expect(() => parseEntry(JSON.stringify({ ...raw, extra: 1 }))).toThrow(/extra/);
    expect(() => parseEntry(JSON.stringify({ ...raw, id: partitionId('other') }))).toThrow(
      /id: must be the hash of token/,
    );
    expect(() => parseEntry(JSON.stringify({ ...raw, parentIds: [] }))).toThrow(/parentIds/);
    expect(() => parseEntry(JSON.stringify({ ...raw, childIds: [] }))).toThrow(/childIds/);
    expect(() => parseEntry(JSON.stringify({ ...raw, end: null }))).toThrow(/must be set when finished/);
    expect(() => parseEntry(JSON.stringify({ ...raw, state: 'leased' }))).toThrow(
      /lease: must be set when leased/,
    );
    expect(() =>
      parseEntry(JSON.stringify({ ...raw, lease: { holder: 'h', expiresAt: raw.start } })),
    ).toThrow(/lease: must be null when finished/);
  });
});

describe('metadata projection', () => {
  it('round-trips the fields the scheduler needs', () => {
    for (const e of [
      entry!,
      finished,
      { ...leased, state: 'leased' as const, lease: { holder: 'h', expiresAt: T } },
    ]) {
      expect(fromMetadata({ ...toMetadata(e), unrelated: 'x' })).toEqual(viewOf(e));
    }
    expect(fromMetadata(toMetadata({ ...viewOf(finished), childIds: [] })).childIds).toEqual([]);
  });

  it('stays within 8 KiB for a partition with 100 parents and children, and refuses beyond', () => {
    const many = Array.from({ length: 100 }, (_, i) => partitionId(`t${i}`));
    const md = toMetadata({ ...viewOf(finished), parentIds: many, childIds: many });
    expect(metadataSize(md)).toBeLessThanOrEqual(METADATA_LIMIT_BYTES);
    const tooMany = Array.from({ length: 130 }, (_, i) => partitionId(`t${i}`));
    expect(() => toMetadata({ ...viewOf(finished), parentIds: tooMany, childIds: tooMany })).toThrow(
      /over the 8192-byte limit/,
    );
  });

  it('rejects corrupt metadata, naming the fields', () => {
    const md = toMetadata(finished);
    expect(() => fromMetadata({ ...md, 'sluice-position': 'x', 'sluice-parents': 'a,b' }, 'obj')).toThrow(
      /obj is corrupt: sluice-position: .*; sluice-parents: must be comma-separated partition ids/,
    );
    expect(() => fromMetadata({ ...md, 'sluice-lease-holder': 'h' })).toThrow(/lease holder and expiry/);
    expect(() => fromMetadata({})).toThrow(/sluice-id/);
  });
});

describe('manifest and object layout', () => {
  const manifest: Manifest = {
    format: 1,
    pipeline: 'orders',
    stream: 'OrdersStream',
    dialect: 'POSTGRESQL',
    start: T,
    epoch: 1,
    state: 'running',
    reason: null,
    writer: 'w',
  };

  it('round-trips the manifest and starts new epochs', () => {
    expect(parseManifest(serializeManifest(manifest))).toEqual(manifest);
    expect(nextEpoch(manifest, addNanos(T, 5n), 'w2')).toEqual({
      ...manifest,
      epoch: 2,
      start: addNanos(T, 5n),
      state: 'starting',
      writer: 'w2',
    });
    expect(() => parseManifest('{"format":2}')).toThrow(/pipeline manifest is corrupt: format/);
  });

  it('names objects under the pipeline prefix, partitions by epoch', () => {
    const paths = ledgerPaths('orders');
    const id = partitionId('tok');
    expect(paths.manifest).toBe('orders/manifest.json');
    expect(paths.status).toBe('orders/status.json');
    expect(paths.backfill('j1')).toBe('orders/backfills/j1.json');
    expect(paths.partitionsPrefix).toBe('orders/partitions/');
    expect(paths.epochPrefix(3)).toBe('orders/partitions/e3/');
    expect(paths.partition(3, id)).toBe(`orders/partitions/e3/${id}.json`);
    expect(partitionIdFromName(paths.partition(3, id))).toEqual({ epoch: 3, id });
    expect(partitionIdFromName('orders/manifest.json')).toBeNull();
  });
});
