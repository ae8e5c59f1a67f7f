import { CHANGE_RECORD_TYPE } from '../../../../local/emulators/spanner/change-streams/wire';
import type { WireValue } from '../../../../local/emulators/spanner/hooks';
import {
  collect,
  decode,
  del,
  engineWith,
  gsqlQuery,
  ins,
  manualClock,
  pgQuery,
  singer,
  upd,
} from './fixtures';
import { walkDag } from './walk';

/** Commits each change list as one transaction, one ms apart; returns the commit timestamps. */
function commitAll(
  engine: ReturnType<typeof engineWith>['engine'],
  schema: ReturnType<typeof engineWith>['schema'],
  clock: ReturnType<typeof manualClock>,
  txs: Array<Parameters<typeof engine.onCommit>[0]['changes']>,
  tag = '',
): bigint[] {
  return txs.map((changes) => {
    const ts = clock.advance(1);
    engine.onCommit({ commitTimestampNs: ts, transactionTag: tag, changes, schema });
    return ts;
  });
}

async function dataRecords(capture: string, txs: Parameters<typeof commitAll>[3], pg = false, extra = '') {
  const clock = manualClock();
  const start = clock.now();
  const opt = pg
    ? `WITH (value_capture_type = '${capture}'${extra})`
    : `OPTIONS (value_capture_type = '${capture}'${extra})`;
  const { engine, schema } = engineWith([`CREATE CHANGE STREAM S FOR ALL ${opt}`], {
    now: clock.now,
    dialect: pg ? 'POSTGRESQL' : 'GOOGLE_STANDARD_SQL',
    initialPartitions: 1,
  });
  commitAll(engine, schema, clock, txs, 'tag=1');
  const end = clock.advance(1);
  const walk = await walkDag(engine, schema, 'S', start, end);
  return walk.data.map((d) => d.body);
}

const before = singer(1);

/** A manual clock, the time it starts at, and an engine on it with stream S over all tables in `partitions`. */
function streamOnManualClock(partitions: number) {
  const clock = manualClock();
  const start = clock.now();
  const { engine, schema } = engineWith(['CREATE CHANGE STREAM S FOR ALL'], {
    now: clock.now,
    initialPartitions: partitions,
  });
  return { clock, start, engine, schema };
}

describe('data change records per value capture type', () => {
  it('OLD_AND_NEW_VALUES: inserts carry every column, updates the written ones old and new, deletes the old row', async () => {
    const [i, u, d] = await dataRecords('OLD_AND_NEW_VALUES', [
      [ins(1)],
      [upd(1, before, { Name: 'z' })],
      [del(1, { ...before, Name: 'z' })],
    ]);
    expect(i.mod_type).toBe('INSERT');
    expect(i.column_types.map((c: { name: string }) => c.name)).toEqual(Object.keys(before));
    expect(i.mods[0].keys).toEqual({ SingerId: '1' });
    // An insert's new values are the written row's non-key columns, in wire form, unchanged.
    const { SingerId: _key, ...nonKeyColumns } = before;
    expect(i.mods[0].new_values).toEqual(nonKeyColumns);
    expect(i.mods[0].old_values).toEqual({});
    expect(u.column_types.map((c: { name: string }) => c.name)).toEqual(['SingerId', 'Name']);
    expect(u.mods[0]).toEqual({
      keys: { SingerId: '1' },
      new_values: { Name: 'z' },
      old_values: { Name: 'n1' },
    });
    expect(d.mods[0].new_values).toEqual({});
    expect(d.mods[0].old_values.Name).toBe('z');
    expect(d.column_types).toHaveLength(11);
  });

  it('NEW_ROW: updates carry the full new row and no old values; deletes carry nothing', async () => {
    const [, u, d] = await dataRecords('NEW_ROW', [
      [ins(1)],
      [upd(1, before, { Name: 'z' })],
      [del(1, before)],
    ]);
    expect(u.value_capture_type).toBe('NEW_ROW');
    expect(u.mods[0].new_values.Name).toBe('z');
    expect(u.mods[0].new_values.Score).toBe(1.5);
    expect(u.mods[0].old_values).toEqual({});
    expect(d.mods[0]).toEqual({ keys: { SingerId: '1' }, new_values: {}, old_values: {} });
  });

  it('NEW_VALUES: updates carry only the written columns, never old values', async () => {
    const [, u, d] = await dataRecords('NEW_VALUES', [
      [ins(1)],
      [upd(1, before, { Name: 'z', Score: 2 })],
      [del(1, before)],
    ]);
    expect(u.mods[0]).toEqual({
      keys: { SingerId: '1' },
      new_values: { Name: 'z', Score: 2 },
      old_values: {},
    });
    expect(d.mods[0].old_values).toEqual({});
  });

  it('NEW_ROW_AND_OLD_VALUES: full new row, old values of the written columns only', async () => {
    const [, u, d] = await dataRecords('NEW_ROW_AND_OLD_VALUES', [
      [ins(1)],
      [upd(1, before, { Name: 'z' })],
      [del(1, before)],
    ]);
    expect(Object.keys(u.mods[0].new_values)).toHaveLength(10);
    expect(u.mods[0].old_values).toEqual({ Name: 'n1' });
    expect(d.mods[0].old_values.Balance).toBe('12.50');
  });

  it('encodes NaN / infinities as strings and INT64 keys as strings', async () => {
    const [i] = await dataRecords('NEW_ROW', [
      [ins(7, singer(7, { Score: 'NaN', Ratio: '-Infinity', Tags: [] }))],
    ]);
    expect(i.mods[0].keys).toEqual({ SingerId: '7' });
    expect(i.mods[0].new_values).toMatchObject({ Score: 'NaN', Ratio: '-Infinity', Tags: [] });
  });

  it('column types are JSON in the service form, arrays and PG annotations included', async () => {
    const [g] = await dataRecords('NEW_ROW', [[ins(1)]]);
    const types = Object.fromEntries(
      g.column_types.map((c: { name: string; type: unknown }) => [c.name, c.type]),
    );
    expect(types.Tags).toEqual({ code: 'ARRAY', array_element_type: { code: 'STRING' } });
    expect(g.column_types[0]).toEqual({
      name: 'SingerId',
      type: { code: 'INT64' },
      is_primary_key: true,
      ordinal_position: 1,
    });
    const [p] = await dataRecords('NEW_ROW', [[ins(1)]], true);
    const pgTypes = Object.fromEntries(
      p.column_types.map((c: { name: string; type: unknown }) => [c.name, c.type]),
    );
    expect(pgTypes.Meta).toEqual({ code: 'JSON', type_annotation: 'PG_JSONB' });
    expect(pgTypes.Balance).toEqual({ code: 'NUMERIC', type_annotation: 'PG_NUMERIC' });
    expect(p.number_of_records_in_transaction).toBe(1);
  });
});

describe('grouping, exclusion and transaction fields', () => {
  it('groups consecutive mods of one table, mod type and column set; splits on any difference', async () => {
    const recs = await dataRecords('OLD_AND_NEW_VALUES', [
      [
        ins(1),
        ins(2),
        upd(3, singer(3), { Name: 'a' }),
        upd(4, singer(4), { Name: 'b' }),
        upd(5, singer(5), { Score: 3 }),
        del(6, singer(6)),
      ],
    ]);
    expect(recs.map((r) => [r.mod_type, r.mods.length])).toEqual([
      ['INSERT', 2],
      ['UPDATE', 2],
      ['UPDATE', 1],
      ['DELETE', 1],
    ]);
    expect(recs.map((r) => r.record_sequence)).toEqual(['00000000', '00000001', '00000002', '00000003']);
    expect(new Set(recs.map((r) => r.server_transaction_id)).size).toBe(1);
    expect(recs.every((r) => r.number_of_records_in_transaction === 4 && r.transaction_tag === 'tag=1')).toBe(
      true,
    );
    expect(recs.filter((r) => r.is_last_record_in_transaction_in_partition)).toHaveLength(1);
    expect(recs[3].is_last_record_in_transaction_in_partition).toBe(true);
    expect(recs[0].is_system_transaction).toBe(false);
  });

  it('exclude_insert / exclude_update / exclude_delete drop those mods', async () => {
    const txs = [[ins(1)], [upd(1, before, { Name: 'z' })], [del(1, before)]];
    const noIns = await dataRecords('OLD_AND_NEW_VALUES', txs, false, ', exclude_insert = true');
    expect(noIns.map((r) => r.mod_type)).toEqual(['UPDATE', 'DELETE']);
    const noUpd = await dataRecords('OLD_AND_NEW_VALUES', txs, true, ', exclude_update = true');
    expect(noUpd.map((r) => r.mod_type)).toEqual(['INSERT', 'DELETE']);
    const noDel = await dataRecords('OLD_AND_NEW_VALUES', txs, false, ', exclude_delete = true');
    expect(noDel.map((r) => r.mod_type)).toEqual(['INSERT', 'UPDATE']);
  });

  it('column lists: FOR T(c) tracks keys plus c, FOR T() keys only, updates of untracked columns write nothing', async () => {
    const clock = manualClock();
    const start = clock.now();
    const { engine, schema } = engineWith(
      ['CREATE CHANGE STREAM A FOR Singers(Name)', 'CREATE CHANGE STREAM K FOR Singers()'],
      { now: clock.now },
    );
    commitAll(engine, schema, clock, [
      [ins(1)],
      [upd(1, before, { Score: 9 })],
      [upd(1, before, { Name: 'q' })],
    ]);
    const end = clock.advance(1);
    const a = (await walkDag(engine, schema, 'A', start, end)).data.map((d) => d.body);
    expect(a.map((r) => r.mod_type)).toEqual(['INSERT', 'UPDATE']);
    expect(a[0].mods[0].new_values).toEqual({ Name: 'n1' });
    expect(a[1].mods[0].new_values).toEqual({ Name: 'q' });
    const k = (await walkDag(engine, schema, 'K', start, end)).data.map((d) => d.body);
    expect(k.map((r) => [r.mod_type, r.mods[0].new_values])).toEqual([['INSERT', {}]]);
  });

  it('spreads one transaction over partitions with consistent counts', async () => {
    const { clock, start, engine, schema } = streamOnManualClock(4);
    commitAll(engine, schema, clock, [Array.from({ length: 40 }, (_, i) => ins(i + 1))]);
    const walk = await walkDag(engine, schema, 'S', start, clock.advance(1));
    const recs = walk.data;
    const tokens = new Set(recs.map((r) => r.token));
    expect(tokens.size).toBeGreaterThan(1);
    expect(recs.every((r) => r.body.number_of_records_in_transaction === recs.length)).toBe(true);
    expect(recs.every((r) => r.body.number_of_partitions_in_transaction === tokens.size)).toBe(true);
    for (const tok of tokens)
      expect(
        recs.filter((r) => r.token === tok && r.body.is_last_record_in_transaction_in_partition),
      ).toHaveLength(1);
    expect(new Set(recs.map((r) => r.body.record_sequence)).size).toBe(recs.length);
    expect(recs.flatMap((r) => r.body.mods)).toHaveLength(40);
  });
});

describe('wire form', () => {
  it('GoogleSQL rows follow the ChangeRecord type with empty arrays for unused kinds; PG rows are one JSONB object', async () => {
    const { clock, start, engine, schema } = streamOnManualClock(1);
    const q = gsqlQuery(engine, schema, 'S', { start, end: start });
    expect(q.metadata.rowType.fields).toEqual([{ name: 'ChangeRecord', type: CHANGE_RECORD_TYPE }]);
    const [row] = (await collect(q.rows)) as [WireValue[]];
    const token = decode(row, false).body.child_partitions[0].token;
    expect(row).toEqual([[[[], [], [[expect.any(String), '00000000', [[token, []]]]]]]]);
    engine.onCommit({ commitTimestampNs: clock.advance(1), transactionTag: '', changes: [ins(1)], schema });
    const rows = await collect(gsqlQuery(engine, schema, 'S', { start, end: clock.now(), token }).rows);
    // biome-ignore lint/suspicious/noExplicitAny: digging into the nested wire lists
    const dataStruct = (rows as any)[0][0][0][0][0] as WireValue[];
    expect(dataStruct).toHaveLength(13);
    expect(typeof dataStruct[9]).toBe('string');

    const pgEngine = engineWith(['CREATE CHANGE STREAM s FOR ALL'], {
      now: clock.now,
      dialect: 'POSTGRESQL',
      initialPartitions: 1,
    });
    const pq = pgQuery(pgEngine.engine, pgEngine.schema, 's', { start: clock.now() });
    expect(pq.metadata.rowType.fields).toEqual([
      { name: 'read_json_s', type: { code: 'JSON', typeAnnotation: 'PG_JSONB' } },
    ]);
    const [pgRow] = (await collect(pq.rows)) as [WireValue[]];
    expect(Object.keys(JSON.parse(String(pgRow[0])))).toEqual(['child_partitions_record']);
  });
});
