/** The sink contract against the in-memory sinks, plus their test hooks. */
import {
  MemoryCompletenessSink,
  MemoryHistorySink,
  MemoryReplicaSink,
} from '../../shared/adapters/memory/sinks';
import { formatTimestamp } from '../../shared/domain/timestamp';
import { historyContract } from './history-sink.contract';
import { type SinkHarness, singerInsert, singers, sinkContract, type TextRow } from './sinks.contract';

function text(row: Record<string, unknown>): TextRow {
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v === null ? null : String(v)]));
}

function harness(): SinkHarness & { replica: MemoryReplicaSink; history: MemoryHistorySink } {
  const replica = new MemoryReplicaSink();
  const history = new MemoryHistorySink();
  const completeness = new MemoryCompletenessSink();
  return {
    replica,
    history,
    completeness,
    replicaRows: async (d) => replica.rows(d).map(text),
    replicaTable: async (d) => {
      const t = replica.table(d);
      return t && { fields: t.fields.map((f) => f.name), primaryKey: t.primaryKey };
    },
    completenessRows: async () =>
      completeness.rows().map((r) => ({
        source_table: r.sourceTable,
        destination: r.destination,
        watermark_ns: formatTimestamp(r.watermark),
      })),
  };
}

sinkContract('in-memory', async () => harness());

historyContract('in-memory', async () => {
  const history = new MemoryHistorySink();
  return {
    history,
    chunked: history.withRequests(4),
    rowsPerRequest: 4,
    changeIds: async (d) => history.rawRows(d).map((r) => r.change_id),
  };
});

describe('in-memory sinks', () => {
  it('rejects a write with an injected error and applies the re-sent batch', async () => {
    const h = harness();
    await h.replica.ensureTable('singers', singers(), 'all');
    const batch = singerInsert(1, { Name: 'a' });
    h.replica.failNextWrite(Object.assign(new Error('unavailable'), { code: 14 }));
    await expect(h.replica.write('singers', batch)).rejects.toMatchObject({ code: 14 });
    await h.replica.write('singers', batch);
    expect(h.replica.rows('singers')).toEqual([{ SingerId: '1', Name: 'a', Bio: null }]);
  });

  it('refuses a write to a table that was never ensured', async () => {
    await expect(new MemoryReplicaSink().write('nope', [])).rejects.toMatchObject({ code: 5 });
  });

  it('models the CreateWriteStream quota, lost acknowledgements and expired streams', async () => {
    const history = new MemoryHistorySink({ createQuota: 1 });
    await history.ensureTable('h');
    const s = await history.createStream('h', 'committed');
    await expect(history.createStream('h', 'committed')).rejects.toMatchObject({ code: 8 });
    const rows = [1, 2].map((i) => ({ change_id: `c${i}` }) as never);
    history.failNextAppend(Object.assign(new Error('unavailable'), { code: 14 }), { applied: true });
    await expect(history.appendAt('h', s.name, 0, rows)).rejects.toMatchObject({ code: 14 });
    expect(history.rawRows('h')).toHaveLength(2); // acknowledged by "BigQuery", lost on the way back
    expect(await history.appendAt('h', s.name, 0, rows)).toEqual({ kind: 'already-exists', offset: 0 });
    history.expire(s.name);
    expect(await history.appendAt('h', s.name, 2, rows)).toMatchObject({ kind: 'unusable', reason: 'gone' });
    expect(history.rawRows('h')).toHaveLength(2);
  });
});
