/** The sink contract against the in-memory sinks, plus their test hooks. */
import {
  MemoryCompletenessSink,
  MemoryHistorySink,
  MemoryReplicaSink,
} from '../../shared/adapters/memory/sinks';
import { historyRows } from '../../shared/domain/history-rows';
import { formatTimestamp } from '../../shared/domain/timestamp';
import {
  at,
  changesOf,
  record,
  type SinkHarness,
  singers,
  sinkContract,
  type TextRow,
} from './sinks.contract';

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
    historyChangeIds: async (d) => history.rawRows(d).map((r) => r.change_id),
    completenessRows: async () =>
      completeness.rows().map((r) => ({
        source_table: r.sourceTable,
        destination: r.destination,
        watermark_ns: formatTimestamp(r.watermark),
      })),
  };
}

sinkContract('in-memory', async () => harness());

describe('in-memory sinks', () => {
  it('rejects a write with an injected error and applies the re-sent batch', async () => {
    const h = harness();
    await h.replica.ensureTable('singers', singers(), 'all');
    const batch = changesOf(
      record({
        ts: at(1),
        modType: 'INSERT',
        mods: [{ keys: { SingerId: '1' }, newValues: { Name: 'a' }, oldValues: {} }],
      }),
    );
    h.replica.failNextWrite(Object.assign(new Error('unavailable'), { code: 14 }));
    await expect(h.replica.write('singers', batch)).rejects.toMatchObject({ code: 14 });
    await h.replica.write('singers', batch);
    expect(h.replica.rows('singers')).toEqual([{ SingerId: '1', Name: 'a', Bio: null }]);
  });

  it('refuses a write to a table that was never ensured', async () => {
    await expect(new MemoryReplicaSink().write('nope', [])).rejects.toMatchObject({ code: 5 });
  });

  it('shows the dedup view: one row per change_id', async () => {
    const h = harness();
    await h.history.ensureTable('h');
    const rows = [{ keys: { SingerId: '1' }, newValues: {}, oldValues: {} }];
    const r = record({ ts: at(1), modType: 'DELETE', mods: rows });
    await h.history.append('h', historyRows(r), 'k');
    await h.history.append('h', historyRows(r), 'k');
    expect(h.history.rawRows('h')).toHaveLength(2);
    expect(h.history.dedupRows('h')).toHaveLength(1);
    expect(h.history.batches).toEqual(['k', 'k']);
  });
});
