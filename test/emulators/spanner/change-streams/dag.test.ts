import { createChangeStreamEngine } from '../../../../local/emulators/spanner/change-streams/engine';
import { VALUE_CAPTURE_TYPES } from '../../../../local/emulators/spanner/change-streams/model';
import { realClock } from '../../../../local/emulators/spanner/change-streams/time';
import type { RowChange, SchemaView, WireValue } from '../../../../local/emulators/spanner/hooks';
import { formatTimestamp, fromNanos } from '../../../../shared/domain/timestamp';
import { fakeSchema, singer } from './fixtures';
import { walkDag } from './walk';

/** A deterministic workload: multi-key, multi-table transactions of inserts, updates and deletes. */
function workload(count: number): RowChange[][] {
  const rows = new Map<string, Record<string, WireValue>>();
  const txs: RowChange[][] = [];
  let seed = 7;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let t = 0; t < count; t++) {
    const changes: RowChange[] = [];
    const used = new Set<string>();
    for (let m = 0; m < 1 + rnd(5); m++) {
      const album = rnd(2) === 0;
      const id = 1 + rnd(12);
      const key = `${album ? 'A' : 'S'}${id}`;
      if (used.has(key)) continue;
      used.add(key);
      const before = rows.get(key) ?? null;
      const keys: Record<string, WireValue> = album
        ? { SingerId: String(id), AlbumId: `a${id}` }
        : { SingerId: String(id) };
      const table = album ? 'Albums' : 'Singers';
      if (before && rnd(4) === 0) {
        changes.push({ table, modType: 'DELETE', keys, oldRow: before, newRow: null, writtenColumns: [] });
        rows.delete(key);
      } else if (before) {
        const set: Record<string, WireValue> = album ? { Plays: String(t) } : { Name: `v${t}` };
        const after = { ...before, ...set };
        changes.push({
          table,
          modType: 'UPDATE',
          keys,
          oldRow: before,
          newRow: after,
          writtenColumns: Object.keys(set),
        });
        rows.set(key, after);
      } else {
        const after = album ? { ...keys, Title: `t${t}`, Plays: '0' } : singer(id, { Name: `v${t}` });
        changes.push({
          table,
          modType: 'INSERT',
          keys,
          oldRow: null,
          newRow: after,
          writtenColumns: Object.keys(after),
        });
        rows.set(key, after);
      }
    }
    txs.push(changes);
  }
  return txs;
}

async function runDag(dialect: SchemaView['dialect']) {
  const schema = fakeSchema(dialect);
  const now = realClock();
  const engine = createChangeStreamEngine({ now, initialPartitions: 2 });
  const names = VALUE_CAPTURE_TYPES.map((v) => `S_${v}`);
  const opts = (v: string) =>
    dialect === 'POSTGRESQL' ? `WITH (value_capture_type = '${v}')` : `OPTIONS (value_capture_type = '${v}')`;
  for (const [i, v] of VALUE_CAPTURE_TYPES.entries()) {
    engine.applyDdl(`CREATE CHANGE STREAM ${names[i]} FOR ALL ${opts(v)}`, schema, now());
  }
  const start = now();
  const committed: Array<{ ts: bigint; change: RowChange }> = [];
  const txs = workload(60);
  txs.forEach((changes, t) => {
    const ts = now();
    engine.onCommit({ commitTimestampNs: ts, transactionTag: `tx${t}`, changes, schema });
    for (const change of changes) committed.push({ ts, change });
    if (t % 8 === 7) engine.admin.churnNow();
  });
  const end = now();
  const ops = engine.admin.partitions(names[0]);
  expect(ops.filter((p) => p.endNs !== null).length).toBeGreaterThanOrEqual(7);
  expect(ops.some((p) => p.parents.length === 2)).toBe(true);
  for (const [i, name] of names.entries()) {
    const walk = await walkDag(engine, schema, name, start, end);
    const seen = walk.data.flatMap((d) =>
      (d.body.mods as Array<{ keys: Record<string, string>; new_values: Record<string, unknown> }>).map(
        (m) => ({
          ts: d.body.commit_timestamp as string,
          table: d.body.table_name as string,
          type: d.body.mod_type as string,
          key: JSON.stringify(m.keys),
          mod: m,
        }),
      ),
    );
    const expected = committed.map(({ ts, change }) => ({
      ts,
      table: change.table,
      type: change.modType,
      key: JSON.stringify(change.keys),
      change,
    }));
    expect(seen).toHaveLength(expected.length);
    const id = (x: { ts: string | bigint; table: string; type: string; key: string }) =>
      `${x.ts}|${x.table}|${x.type}|${x.key}`;
    const wanted = new Set(expected.map((e) => id({ ...e, ts: walkIso(e.ts) })));
    expect(new Set(seen.map(id)).size).toBe(seen.length);
    for (const s of seen) expect(wanted.has(id(s))).toBe(true);
    const perKey = new Map<string, string[]>();
    for (const s of seen)
      perKey.set(`${s.table}${s.key}`, [...(perKey.get(`${s.table}${s.key}`) ?? []), s.ts]);
    for (const list of perKey.values()) expect([...list].sort()).toEqual(list);
    if (VALUE_CAPTURE_TYPES[i] === 'NEW_ROW') {
      for (const s of seen.filter((x) => x.type !== 'DELETE')) {
        const e = expected.find((x) => id({ ...x, ts: walkIso(x.ts) }) === id(s));
        for (const [col, v] of Object.entries(s.mod.new_values)) {
          if (typeof v !== 'object') expect(String(v)).toBe(String(e?.change.newRow?.[col]));
        }
      }
    }
  }
  engine.admin.close();
}

const walkIso = (ts: bigint) => formatTimestamp(fromNanos(ts));

describe('the partition DAG through churns', () => {
  it('GoogleSQL: every committed mod exactly once, per key in commit order, for every capture type', async () => {
    await runDag('GOOGLE_STANDARD_SQL');
  });
  it('PostgreSQL: the same through the JSONB form', async () => {
    await runDag('POSTGRESQL');
  });
  it('churns on the configured interval', async () => {
    const now = realClock();
    const engine = createChangeStreamEngine({ now, churnMs: 40 });
    engine.applyDdl('CREATE CHANGE STREAM S FOR ALL', fakeSchema(), now());
    await new Promise((r) => setTimeout(r, 300));
    engine.admin.close();
    expect(engine.admin.partitions().filter((p) => p.endNs !== null).length).toBeGreaterThanOrEqual(5);
  });
});
