/**
 * SpannerSnapshotSource against the Spanner emulator (official client): partitions cover a table exactly
 * once at T while writes continue, a fresh client rejoins the transaction from the opaque handles, and a
 * snapshot older than version retention fails permanently with the remedy in the message.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { createTestDatabase, emulatorClient, type TestDatabase } from '../../local/emulators/spanner/client';
import { type RunningSpannerEmulator, startSpannerEmulator } from '../../local/emulators/spanner/server';
import { SpannerSnapshotSource } from '../../shared/adapters/spanner/snapshot-source';
import type { Dialect } from '../../shared/domain/change-record';
import { SluiceError } from '../../shared/domain/errors';
import type { TableSchema } from '../../shared/domain/information-schema';
import { addNanos, fromNanos } from '../../shared/domain/timestamp';
import type { WriterValue } from '../../shared/domain/value-mapping';
import { KEY_VALUES, type PartitionRequest, type SnapshotRow } from '../../shared/ports/snapshot-source';

let emu: RunningSpannerEmulator;

beforeAll(async () => {
  emu = await startSpannerEmulator({ port: 0, partitions: 3 });
});

afterAll(async () => {
  await emu?.stop();
});

function schemaOf(dialect: Dialect): TableSchema {
  const n = (s: string) => (dialect === 'POSTGRESQL' ? s.toLowerCase() : s);
  return {
    name: n('Items'),
    primaryKey: [n('Id')],
    columns: [
      { name: n('Id'), type: { code: 'INT64' }, nullable: false, ordinalPosition: 1 },
      { name: n('Label'), type: { code: 'STRING' }, nullable: true, ordinalPosition: 2 },
      { name: n('At'), type: { code: 'TIMESTAMP' }, nullable: true, ordinalPosition: 3 },
    ],
  };
}

const DDL: Record<Dialect, string> = {
  GOOGLE_STANDARD_SQL:
    'CREATE TABLE Items (Id INT64 NOT NULL, Label STRING(MAX), At TIMESTAMP) PRIMARY KEY (Id)',
  POSTGRESQL: 'CREATE TABLE items (id bigint NOT NULL PRIMARY KEY, label varchar, at timestamptz)',
};

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])('SpannerSnapshotSource (%s)', (dialect) => {
  let db: TestDatabase;
  const schema = schemaOf(dialect);
  const [id, label, at] = schema.columns.map((c) => c.name) as [string, string, string];

  beforeAll(async () => {
    db = await createTestDatabase(emu, dialect, [DDL[dialect]]);
    const rows = Array.from({ length: 40 }, (_, i) => ({
      [id]: String(i + 1),
      [label]: `row-${i + 1}`,
      [at]: '2024-05-06T07:08:09.123456789Z',
    }));
    await db.database.table(schema.name).insert(rows);
  });

  afterAll(async () => {
    await db?.close();
  });

  /** A source on the test database, a snapshot it opens now and that snapshot's partitions of the table. */
  async function partitionedSnapshot(request: Omit<PartitionRequest, 'table'>) {
    const source = new SpannerSnapshotSource(db.database, { dialect });
    const snapshot = await source.open();
    const partitions = await source.partition(snapshot, { table: schema, ...request });
    return { source, snapshot, partitions };
  }

  it('covers the table exactly once at T while writes continue, read from a fresh client', async () => {
    const { source, snapshot, partitions } = await partitionedSnapshot({
      columns: [id, label, at],
      dataBoost: true,
      priority: 'low',
      maxPartitions: 3,
    });
    expect(partitions.length).toBeGreaterThan(1);
    // Writes after T: new rows, an update and a delete must not show in the snapshot.
    const table = db.database.table(schema.name);
    await table.insert({ [id]: '1000', [label]: 'late' });
    await table.update({ [id]: '1', [label]: 'changed' });
    await table.deleteRows([['2']]);
    // Another process: a new client, the handles as strings only.
    const other = emulatorClient(emu);
    const otherDb = other.instance(db.instance.id).database(db.database.id);
    const reader = new SpannerSnapshotSource(otherDb, { dialect });
    const seen: Record<string, WriterValue>[] = [];
    const handles = JSON.parse(JSON.stringify({ transaction: snapshot.transaction, partitions }));
    for (const p of handles.partitions as string[]) {
      for await (const row of reader.read({ ...snapshot, transaction: handles.transaction }, p, schema))
        seen.push(row);
    }
    await otherDb.close();
    other.close();
    const ids = seen.map((r) => Number(r[id])).sort((a, b) => a - b);
    expect(ids).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(seen.find((r) => r[id] === '1')).toEqual({
      [id]: '1',
      [label]: 'row-1',
      [at]: '1714979289123456',
    });
    await source.close(snapshot);
  });

  it('carries the wire form of the key columns asked for alongside each row (a lookup joins on it)', async () => {
    const { source, snapshot, partitions } = await partitionedSnapshot({
      columns: [id, label, at],
      dataBoost: false,
      priority: 'medium',
    });
    const keyed: SnapshotRow[] = [];
    for (const p of partitions)
      for await (const row of source.read(snapshot, p, schema, undefined, [at, id])) keyed.push(row);
    const row = keyed.find((r) => r[id] === '3');
    // The row keeps BigQuery's form (microseconds); the key values keep Spanner's, to the nanosecond.
    expect(row?.[at]).toBe('1714979289123456');
    expect(row?.[KEY_VALUES]).toEqual({ [at]: '2024-05-06T07:08:09.123456789Z', [id]: '3' });
    expect(Object.keys(row ?? {})).toEqual([id, label, at]);
    for await (const plain of source.read(snapshot, partitions[0]!, schema)) {
      expect(plain[KEY_VALUES]).toBeUndefined();
      break;
    }
    await source.close(snapshot);
  });

  it('gives a slow consumer every row, the last PartialResultSets of each partition included', async () => {
    const table = db.database.table(schema.name);
    const many = Array.from({ length: 3_000 }, (_, i) => ({
      [id]: String(10_000 + i),
      [label]: 'x'.repeat(64),
    }));
    for (let i = 0; i < many.length; i += 1_000) await table.insert(many.slice(i, i + 1_000));
    const { source, snapshot, partitions } = await partitionedSnapshot({
      columns: [id, label],
      dataBoost: false,
      priority: 'low',
    });
    let rows = 0;
    for (const p of partitions) {
      for await (const _ of source.read(snapshot, p, schema)) {
        // Slower than Spanner: the results wait in the stream's buffers while this waits.
        if (++rows % 100 === 0) await new Promise((r) => setTimeout(r, 20));
      }
    }
    // 40 rows, one inserted and one deleted by the first test, and these 3,000.
    expect(rows).toBe(40 + 1 - 1 + 3_000);
    await source.close(snapshot);
  });

  it('reads a value larger than a PartialResultSet (split across sets) whole', async () => {
    const big = `${'é'.repeat(600_000)}\u{1F600}${'z'.repeat(1_500_000)}`;
    await db.database.table(schema.name).insert({ [id]: '99999', [label]: big });
    const { source, snapshot, partitions } = await partitionedSnapshot({
      columns: [id, label],
      dataBoost: false,
      priority: 'low',
    });
    let found: WriterValue | undefined;
    for (const p of partitions)
      for await (const row of source.read(snapshot, p, schema)) if (row[id] === '99999') found = row[label];
    expect(found).toBe(big);
    await db.database.table(schema.name).deleteRows([['99999']]);
  });

  it('opens at an exact past timestamp and reports it', async () => {
    const source = new SpannerSnapshotSource(db.database, { dialect });
    const t = addNanos(fromNanos(emu.admin.nowNs()), -123);
    const snapshot = await source.open(t);
    expect(snapshot.readTimestamp).toBe(t);
  });

  it('fails permanently, naming version_retention_period, for a snapshot older than retention', async () => {
    const source = new SpannerSnapshotSource(db.database, { dialect });
    const tooOld = addNanos(fromNanos(emu.admin.nowNs()), -2n * 3600n * 1_000_000_000n);
    const err: unknown = await (async () => {
      const snapshot = await source.open(tooOld);
      const [p] = await source.partition(snapshot, {
        table: schema,
        columns: [id],
        dataBoost: false,
        priority: 'low',
      });
      for await (const _ of source.read(snapshot, p!, schema));
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SluiceError);
    expect((err as SluiceError).kind).toBe('permanent');
    expect((err as SluiceError).message).toMatch(/too old.*version_retention_period/);
  });
});
