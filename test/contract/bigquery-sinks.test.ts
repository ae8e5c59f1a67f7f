/**
 * The sink contract against BigQuery (the local emulator through the official clients), plus what only the
 * real clients produce: table metadata, value round trips, append failures and dropped connections.
 */
process.env.METADATA_SERVER_DETECTION = 'none';
delete process.env.BIGQUERY_EMULATOR_HOST;

import type { BigQuery, TableField } from '@google-cloud/bigquery';
import { BigQueryCompletenessSink } from '../../shared/adapters/bigquery/completeness-sink';
import { BigQueryHistorySink } from '../../shared/adapters/bigquery/history-sink';
import { BigQueryReplicaSink } from '../../shared/adapters/bigquery/replica-sink';
import { toWriterValue } from '../../shared/domain/value-mapping';
import { bigQueryEmulatorForFile } from '../emulators/bigquery/support/emulator-for-file';
import { historyContract } from './history-sink.contract';
import {
  at,
  changesOf,
  record,
  type SinkHarness,
  singerInsert,
  singers,
  sinkContract,
  type TextRow,
} from './sinks.contract';

const PROJECT = 'test-project';
const bq = bigQueryEmulatorForFile(PROJECT);

/** A cell as text: client objects (timestamps, dates, Big) by their value, BYTES as base64. */
function cellText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (Buffer.isBuffer(v)) return v.toString('base64');
  if (typeof v === 'object' && 'value' in v) return String((v as { value: unknown }).value);
  return String(v);
}

/** A fresh dataset and sinks on it. */
async function bigQueryHarness(opts: { maxStaleness?: string } = {}) {
  const { dataset, bigquery, clients } = await bq.freshDataset('ds');
  const ref = { projectId: PROJECT, dataset };
  const replica = new BigQueryReplicaSink(clients, { ...ref, ...opts });
  const history = new BigQueryHistorySink(clients, ref);
  const completeness = new BigQueryCompletenessSink(clients, ref);
  const rows = async (table: string) =>
    (await bigquery.dataset(dataset).table(table).getRows({ wrapIntegers: true }))[0] as Record<
      string,
      unknown
    >[];
  const harness: SinkHarness = {
    replica,
    history,
    completeness,
    replicaRows: async (d) =>
      (await rows(d)).map(
        (r): TextRow => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, cellText(v)])),
      ),
    replicaTable: async (d) => {
      const t = bigquery.dataset(dataset).table(d);
      if (!(await t.exists())[0]) return undefined;
      const [m] = await t.getMetadata();
      return {
        fields: (m.schema.fields as TableField[]).map((f) => f.name ?? ''),
        primaryKey: m.tableConstraints?.primaryKey?.columns ?? [],
      };
    },
    completenessRows: async () =>
      (await rows('_sluice_completeness')).map((r) => ({
        source_table: String(r.source_table),
        destination: String(r.destination),
        watermark_ns: String(r.watermark_ns),
      })),
    close: async () => {
      replica.close();
      history.close();
      completeness.close();
    },
  };
  return { harness, replica, history, completeness, bigquery, dataset };
}

sinkContract('BigQuery emulator', async () => (await bigQueryHarness()).harness);

historyContract('BigQuery emulator', async () => {
  const { bigquery, dataset, history, harness } = await bigQueryHarness();
  // About 4 rows of 200-character payloads per request.
  const chunked = new BigQueryHistorySink(
    { bigquery, writer: bq.emu.writerClient() },
    { projectId: PROJECT, dataset, limits: { maxRequestBytes: 4 * 560 } },
  );
  return {
    history,
    chunked,
    rowsPerRequest: 4,
    changeIds: async (d) =>
      (await bigquery.dataset(dataset).table(d).getRows())[0].map((r) => String(r.change_id)),
    close: async () => {
      chunked.close();
      await harness.close?.();
    },
  };
});

const insertOf = (id: number, name: string, ts = 1) => singerInsert(id, { Name: name, Bio: null }, ts);

/** The replica sink of another instance on the same dataset, with connections of its own. */
const anotherInstance = (bigquery: BigQuery, dataset: string) =>
  new BigQueryReplicaSink({ bigquery, writer: bq.emu.writerClient() }, { projectId: PROJECT, dataset });

describe('BigQuery sinks with the official clients', () => {
  it('creates tables with primary key, clustering, max staleness and partitioning; no dedup view', async () => {
    const { replica, history, completeness, bigquery, dataset, harness } = await bigQueryHarness({
      maxStaleness: '0-0 0 0:10:0',
    });
    await replica.ensureTable('singers', singers(), 'all');
    await history.ensureTable('history');
    await completeness.record([{ sourceTable: 'Singers', destination: 'singers', watermark: at(1) }]);
    const meta = async (t: string) => (await bigquery.dataset(dataset).table(t).getMetadata())[0];
    const r = await meta('singers');
    expect(r.tableConstraints).toEqual({ primaryKey: { columns: ['SingerId'] } });
    expect(r.clustering).toEqual({ fields: ['SingerId'] });
    expect(r.maxStaleness).toBe('0-0 0 0:10:0');
    const h = await meta('history');
    expect(h.timePartitioning).toEqual({ type: 'DAY', field: 'commit_timestamp' });
    expect(h.clustering).toEqual({ fields: ['table_name'] });
    expect((await bigquery.dataset(dataset).table('history_dedup').exists())[0]).toBe(false);
    expect((await meta('_sluice_completeness')).tableConstraints).toEqual({
      primaryKey: { columns: ['source_table', 'destination'] },
    });
    await harness.close?.();
  });

  it('round-trips every column type of both dialects to what tabledata.list returns', async () => {
    const { replica, harness } = await bigQueryHarness();
    const cols: Array<
      [
        string,
        { code: string; typeAnnotation?: string; arrayElementType?: { code: string } },
        unknown,
        string | null,
      ]
    > = [
      ['b', { code: 'BOOL' }, true, 'true'],
      ['i', { code: 'INT64' }, '9007199254740993', '9007199254740993'],
      ['f32', { code: 'FLOAT32' }, 1.5, '1.5'],
      ['f64', { code: 'FLOAT64' }, 'NaN', 'NaN'],
      ['n', { code: 'NUMERIC' }, '123.456000001', '123.456000001'],
      [
        'pgn',
        { code: 'NUMERIC', typeAnnotation: 'PG_NUMERIC' },
        '12345678901234567890.0123456789',
        '12345678901234567890.0123456789',
      ],
      ['s', { code: 'STRING' }, 'héllo', 'héllo'],
      ['by', { code: 'BYTES' }, 'AAEC', 'AAEC'],
      ['d', { code: 'DATE' }, '2024-02-29', '2024-02-29'],
      ['ts', { code: 'TIMESTAMP' }, '2024-02-29T12:34:56.123456789Z', '2024-02-29T12:34:56.123456000Z'], // microseconds kept (ADR-104)
      ['j', { code: 'JSON' }, '{"a":1}', '{"a":1}'],
      ['pgj', { code: 'JSON', typeAnnotation: 'PG_JSONB' }, '{"b":[1,2]}', '{"b":[1,2]}'],
      ['u', { code: 'UUID' }, '123e4567-e89b-12d3-a456-426614174000', '123e4567-e89b-12d3-a456-426614174000'],
      ['iv', { code: 'INTERVAL' }, 'P1Y2M3DT4H5M6.5S', 'P1Y2M3DT4H5M6.5S'],
      ['e', { code: 'ENUM' }, '2', '2'],
      ['p', { code: 'PROTO' }, 'CgR0ZXN0', 'CgR0ZXN0'],
      ['arr', { code: 'ARRAY', arrayElementType: { code: 'INT64' } }, ['1', null, '3'], '1,3'],
      ['nul', { code: 'STRING' }, null, null],
    ];
    const source = {
      name: 'AllTypes',
      primaryKey: ['id'],
      columns: [
        { name: 'id', type: { code: 'INT64' }, nullable: false, ordinalPosition: 1 },
        ...cols.map(([name, type], i) => ({ name, type, nullable: true, ordinalPosition: i + 2 })),
      ],
    };
    await replica.ensureTable('all_types', source, 'all');
    const row: Record<string, ReturnType<typeof toWriterValue>> = { id: '1' };
    for (const [name, type, value] of cols) row[name] = toWriterValue(name, type, value as never, []);
    const sequence = changesOf(
      record({
        ts: at(1),
        modType: 'INSERT',
        mods: [{ keys: { SingerId: '1' }, newValues: {}, oldValues: {} }],
      }),
    )[0]!.sequence;
    await replica.write('all_types', [
      { kind: 'upsert', table: 'AllTypes', commitTimestamp: at(1), key: { id: '1' }, sequence, row },
    ]);
    const [got] = await harness.replicaRows('all_types');
    expect(got).toEqual({ id: '1', ...Object.fromEntries(cols.map(([name, , , want]) => [name, want])) });
    await harness.close?.();
  });

  it('rejects a write whose append BigQuery refused, with its code; the re-sent batch applies once', async () => {
    const { replica, harness } = await bigQueryHarness();
    await replica.ensureTable('singers', singers(), 'all');
    bq.emu.admin.failNextAppends(1, 3, 'Injected invalid argument.');
    await expect(replica.write('singers', insertOf(1, 'a'))).rejects.toMatchObject({ code: 3 });
    bq.emu.admin.failNextAppends(1, 14);
    await expect(replica.write('singers', insertOf(1, 'a'))).rejects.toMatchObject({ code: 14 });
    await replica.write('singers', insertOf(1, 'a'));
    await replica.write('singers', insertOf(1, 'a'));
    expect(await harness.replicaRows('singers')).toEqual([{ SingerId: '1', Name: 'a', Bio: null }]);
    await harness.close?.();
  });

  it('a replica table deleted under it is a permanent error naming it and the repair; fresh ensure recreates it', async () => {
    const { replica, harness, bigquery, dataset } = await bigQueryHarness();
    await replica.ensureTable('singers', singers(), 'all');
    await replica.write('singers', insertOf(1, 'a'));
    await bigquery.dataset(dataset).table('singers').delete();
    const failure = await replica.write('singers', insertOf(2, 'b')).catch((e: unknown) => e);
    expect(failure).toMatchObject({ kind: 'permanent' });
    expect((failure as Error).message).toMatch(
      new RegExp(
        `BigQuery table ${dataset}\\.singers was not found: .*POST /backfills.*POST /partitions/retry`,
      ),
    );
    // Not recreated behind the operator's back: the rows written before are gone with the table.
    await expect(replica.write('singers', insertOf(2, 'b'))).rejects.toMatchObject({ kind: 'permanent' });
    expect(await harness.replicaTable('singers')).toBeUndefined();
    // The cache alone would skip it; a fresh ensure (a backfill's) recreates the table.
    await replica.ensureTable('singers', singers(), 'all', { fresh: true });
    await replica.write('singers', insertOf(2, 'b'));
    expect(await harness.replicaRows('singers')).toEqual([{ SingerId: '2', Name: 'b', Bio: null }]);
    await harness.close?.();
  });

  it('a history table deleted under a running instance is a permanent error naming it and the repair', async () => {
    const { history, bigquery, dataset } = await bigQueryHarness();
    await history.ensureTable('singers_history', []);
    const first = await history.createStream('singers_history', 'committed');
    expect(first.name).toBeTruthy();
    await bigquery.dataset(dataset).table('singers_history').delete();
    // The instance ensured the table before: its next stream meets NOT_FOUND, named, not a generic error.
    const failure = await history.createStream('singers_history', 'committed').catch((e: unknown) => e);
    expect(failure).toMatchObject({ kind: 'permanent' });
    expect((failure as Error).message).toMatch(
      new RegExp(
        `history table ${dataset}\\.singers_history was not found .*POST /backfills.*POST /partitions/retry`,
      ),
    );
    // Forgotten as ensured: a fresh ensure (a backfill's) recreates it, and streams open again.
    await history.ensureTable('singers_history', [], { fresh: true });
    expect((await history.createStream('singers_history', 'committed')).name).toBeTruthy();
    history.close();
  });

  it('re-establishes a dropped connection on the next write', async () => {
    const { replica, harness, dataset } = await bigQueryHarness();
    await replica.ensureTable('singers', singers(), 'all');
    await replica.write('singers', insertOf(1, 'a'));
    bq.emu.admin.faults.add({ method: 'AppendRows', times: 1, drop: true });
    await expect(replica.write('singers', insertOf(2, 'b'))).rejects.toMatchObject({ code: 14 });
    await replica.write('singers', insertOf(2, 'b'));
    await replica.write('singers', insertOf(3, 'c'));
    const ids = (await harness.replicaRows('singers')).map((r) => r.SingerId).sort();
    expect(ids).toEqual(['1', '2', '3']);
    expect(bq.emu.admin.ingestionHistory(dataset, 'singers').map((i) => i.changeType)).toEqual([
      'UPSERT',
      'UPSERT',
      'UPSERT',
    ]);
    await harness.close?.();
  });

  it('keeps the CDC columns after BigQuery announces a schema change on the connection', async () => {
    const { replica, bigquery, dataset, harness } = await bigQueryHarness();
    await replica.ensureTable('singers', singers(), 'all');
    await replica.write('singers', insertOf(1, 'a', 1));
    const table = bigquery.dataset(dataset).table('singers');
    const [m] = await table.getMetadata();
    await table.setMetadata({
      schema: { fields: [...m.schema.fields, { name: 'Other', type: 'STRING', mode: 'NULLABLE' }] },
    });
    await replica.write('singers', insertOf(2, 'b', 2)); // answered with updated_schema
    const del = changesOf(
      record({
        ts: at(3),
        modType: 'DELETE',
        mods: [{ keys: { SingerId: '1' }, newValues: {}, oldValues: {} }],
      }),
    );
    await replica.write('singers', del);
    expect((await harness.replicaRows('singers')).map((r) => r.SingerId)).toEqual(['2']);
    await harness.close?.();
  });

  it('writes a column another instance added, reconnecting the connection it opened before', async () => {
    const { replica, bigquery, dataset, harness } = await bigQueryHarness();
    const other = anotherInstance(bigquery, dataset);
    await replica.ensureTable('singers', singers(), 'all');
    await replica.write('singers', insertOf(1, 'a'));
    await other.ensureTable('singers', singers(true), 'all');
    await replica.ensureTable('singers', singers(true), 'all');
    const withExtra = record({
      ts: at(2),
      modType: 'INSERT',
      extra: true,
      mods: [{ keys: { SingerId: '2' }, newValues: { Name: 'b', Bio: null, Extra: 'e' }, oldValues: {} }],
    });
    await replica.write('singers', changesOf(withExtra));
    expect((await harness.replicaRows('singers')).find((r) => r.SingerId === '2')).toMatchObject({
      Extra: 'e',
    });
    other.close();
    await harness.close?.();
  });

  it('adds columns two instances add at the same time: neither patch drops the other', async () => {
    const { replica, bigquery, dataset, harness } = await bigQueryHarness();
    const other = anotherInstance(bigquery, dataset);
    await replica.ensureTable('singers', singers(), 'all');
    const plus = (name: string) => {
      const s = singers();
      return {
        ...s,
        columns: [...s.columns, { name, type: { code: 'STRING' }, nullable: true, ordinalPosition: 9 }],
      };
    };
    await Promise.all([
      replica.ensureTable('singers', plus('X'), 'all'),
      other.ensureTable('singers', plus('Y'), 'all'),
    ]);
    const fields = (await harness.replicaTable('singers'))?.fields ?? [];
    expect([...fields].sort()).toEqual(['Bio', 'Name', 'SingerId', 'X', 'Y']);
    other.close();
    await harness.close?.();
  });

  it('splits a batch into requests under the size limit', async () => {
    const { replica, harness, dataset } = await bigQueryHarness();
    await replica.ensureTable('singers', singers(), 'all');
    const small = new BigQueryReplicaSink(
      { bigquery: bq.emu.bigquery(), writer: bq.emu.writerClient() },
      {
        projectId: PROJECT,
        dataset,
        limits: { maxRequestBytes: 2048 },
      },
    );
    const batch = changesOf(
      record({
        ts: at(1),
        modType: 'INSERT',
        mods: Array.from({ length: 200 }, (_, i) => ({
          keys: { SingerId: String(i) },
          newValues: { Name: 'x'.repeat(50), Bio: null },
          oldValues: {},
        })),
      }),
    );
    await small.write('singers', batch);
    expect(await harness.replicaRows('singers')).toHaveLength(200);
    small.close();
    await harness.close?.();
  });
});
