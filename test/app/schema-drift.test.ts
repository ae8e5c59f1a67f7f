/**
 * The reader's batch path under schema drift, over in-memory sinks and a catalog that keeps schema versions
 * and row versions: the replica gains a column before the first row that has it; a type change is decided
 * by policy; rows a record does not carry are read at the commit timestamp, one read per table and
 * timestamp; stored generated columns are read; a column only a read reveals is not lost; hidden columns
 * are left out; a table SLUICE_TABLES leaves out is logged once.
 */
import { MemoryObjectStore } from '../../shared/adapters/memory/object-store';
import { READS_AHEAD } from '../../shared/app/common';
import { DeadLetterStore } from '../../shared/app/ledger/dead-letters';
import { replayDeadLetters } from '../../shared/app/operator/dead-letter-replay';
import { newDeadLetter } from '../../shared/domain/dead-letter';
import { SluiceError } from '../../shared/domain/errors';
import type { TableSchema } from '../../shared/domain/information-schema';

import { col, record, setup, ts, V1, V1_COLUMNS, V2 } from './support/schema-drift-world';

/** A record of V1's columns at `ts(at)` inserting person `id` named `name`. */
const insertNamed = (at: number, id: string, name: string) =>
  record({ at: ts(at), columns: V1_COLUMNS, mods: [{ id, values: { Name: name } }] });

/** A `NEW_VALUES` update at `ts(at)` of the keys `ids` that changes no column the record shows. */
const keysUpdate = (at: number, ids: string[]) =>
  record({
    at: ts(at),
    modType: 'UPDATE',
    capture: 'NEW_VALUES',
    columns: [['Id', 'INT64']],
    mods: ids.map((id) => ({ id })),
  });

describe('schema drift in the reader batch path', () => {
  it('adds a column to the replica before the first row that has it; history keeps every mod', async () => {
    const s = setup();
    s.catalog.versions.push({ from: ts(0), schema: V1 }, { from: ts(10), schema: V2 });
    await s.write([insertNamed(5, '1', 'a')]);
    const schemaReads = s.catalog.schemaReads;
    await s.write([insertNamed(6, '2', 'b')]);
    expect(s.catalog.schemaReads).toBe(schemaReads);
    await s.write([
      record({
        at: ts(11),
        columns: [...V1_COLUMNS, ['Nick', 'STRING']],
        mods: [{ id: '3', values: { Name: 'c', Nick: 'cc' } }],
      }),
    ]);
    expect(s.replica.table('people')?.fields.map((f) => f.name)).toEqual(['Id', 'Name', 'Nick']);
    expect(s.replica.rows('people')).toEqual([
      { Id: '1', Name: 'a', Nick: null },
      { Id: '2', Name: 'b', Nick: null },
      { Id: '3', Name: 'c', Nick: 'cc' },
    ]);
    expect(s.history.rawRows('people_history')).toHaveLength(3);
    expect(s.lines.find((l) => l.message === 'table.schema-changed')).toMatchObject({
      table: 'People',
      added: ['Nick'],
    });
  });

  it('fails with a permanent error naming table, column, both types and the fix on an incompatible change', async () => {
    const s = setup();
    const bytes: TableSchema = { ...V1, columns: [col('Id', 'INT64', 1), col('Name', 'BYTES', 2)] };
    s.catalog.versions.push({ from: ts(0), schema: V1 }, { from: ts(10), schema: bytes });
    await s.write([insertNamed(5, '1', 'a')]);
    const failure = await s
      .write([
        record({
          at: ts(11),
          columns: [
            ['Id', 'INT64'],
            ['Name', 'BYTES'],
          ],
          mods: [{ id: '1', values: { Name: 'YQ==' } }],
        }),
      ])
      .then(
        () => undefined,
        (e: unknown) => e as { kind?: string; message?: string },
      );
    expect(failure?.kind).toBe('permanent');
    expect(failure?.message).toMatch(
      /column People\.Name changed type: it is now BYTES in Spanner, which maps to BigQuery BYTES \(it was STRING\), but the replica table people holds it as STRING.*Fix: drop/,
    );
  });

  describe('a column dropped and added again with a wider type (INT64, then NUMERIC)', () => {
    const int: TableSchema = { ...V1, columns: [...V1.columns, col('Amount', 'INT64', 3)] };
    const num: TableSchema = { ...V1, columns: [...V1.columns, col('Amount', 'NUMERIC', 4)] };
    const amount = (at: number, id: string, code: string, value: string) =>
      record({
        at: ts(at),
        columns: [...V1_COLUMNS, ['Amount', code]],
        mods: [{ id, values: { Name: id, Amount: value } }],
      });
    const world = () => {
      const s = setup();
      s.catalog.versions.push({ from: ts(0), schema: int }, { from: ts(10), schema: num });
      return s;
    };

    it('writes a lagging record of the old type into the widened column (the same instance)', async () => {
      const s = world();
      await s.write([amount(11, '2', 'NUMERIC', '2.5')]);
      await s.write([amount(5, '1', 'INT64', '7')]);
      expect(s.replica.table('people')?.fields.find((f) => f.name === 'Amount')?.type).toBe('NUMERIC');
      expect(s.replica.rows('people')).toEqual([
        { Id: '2', Name: '2', Amount: '2.5' },
        { Id: '1', Name: '1', Amount: '7' },
      ]);
      expect(s.history.rawRows('people_history')).toHaveLength(2);
    });

    it('writes it from another instance planning the table at the old commit timestamp', async () => {
      const s = world();
      await s.write([amount(11, '2', 'NUMERIC', '2.5')]);
      const lagging = setup(undefined, s);
      await lagging.write([amount(5, '1', 'INT64', '7')]);
      expect(s.replica.table('people')?.fields.find((f) => f.name === 'Amount')?.type).toBe('NUMERIC');
      expect(s.replica.rows('people')).toHaveLength(2);
    });

    it('replays a dead letter of before the change into the widened column', async () => {
      const s = world();
      await s.write([amount(11, '2', 'NUMERIC', '2.5')]);
      const key = Buffer.alloc(32, 1);
      const deadLetters = new DeadLetterStore(new MemoryObjectStore(), 'p', { sealKey: key });
      const letter = newDeadLetter({
        pipeline: 'p',
        partition: { id: 'a'.repeat(32), epoch: 0 },
        position: ts(0),
        now: ts(20),
        rejected: [{ record: amount(5, '1', 'INT64', '7'), error: new SluiceError('permanent', 'rejected') }],
        reason: 'permanent:Error',
      });
      await deadLetters.put(letter);
      const out = await replayDeadLetters(
        { ...s.ports, deadLetters, seal: { key, trustUnsigned: false }, now: () => ts(30), log: s.log },
        { ids: [letter.id] },
      );
      expect(out.results).toMatchObject([{ outcome: 'replayed', rows: 1 }]);
      expect(s.replica.rows('people')).toContainEqual({ Id: '1', Name: '1', Amount: '7' });
    });

    it('still refuses a value FLOAT64 would round: NUMERIC into a column widened to FLOAT64', async () => {
      const s = setup();
      const float: TableSchema = { ...V1, columns: [...V1.columns, col('Amount', 'FLOAT64', 4)] };
      s.catalog.versions.push({ from: ts(0), schema: num }, { from: ts(10), schema: float });
      await s.write([amount(11, '2', 'FLOAT64', '2.5')]);
      await expect(s.write([amount(5, '1', 'NUMERIC', '0.12345678901234567')])).rejects.toThrow(
        /column People\.Amount changed type/,
      );
    });
  });

  it('reads rows a record does not hold at the commit timestamp: one read per table and timestamp', async () => {
    const s = setup();
    s.catalog.versions.push({ from: ts(0), schema: V1 });
    for (const [at, id, name] of [
      [1, '1', 'a'],
      [1, '2', 'b'],
      [1, '3', 'c'],
      [2, '1', 'a2'],
      [2, '2', 'b2'],
    ] as const)
      s.catalog.rows.push({ at: ts(at), table: 'People', id, row: { Id: id, Name: name } });
    await s.write([keysUpdate(1, ['1', '2', '3']), keysUpdate(2, ['1', '2'])]);
    expect(s.catalog.reads.map((r) => [r.at, r.keys])).toEqual([
      [ts(1), 3],
      [ts(2), 2],
    ]);
    expect(s.replica.rows('people')).toEqual([
      { Id: '1', Name: 'a2' },
      { Id: '2', Name: 'b2' },
      { Id: '3', Name: 'c' },
    ]);
  });

  it('overlaps the reads of many timestamps, at most READS_AHEAD at once, and uses them in order', async () => {
    const s = setup();
    s.catalog.versions.push({ from: ts(0), schema: V1 });
    const stamps = Array.from({ length: 30 }, (_, i) => i + 1);
    for (const at of stamps)
      s.catalog.rows.push({ at: ts(at), table: 'People', id: '1', row: { Id: '1', Name: `n${at}` } });
    const read = s.catalog.readRowsAt.bind(s.catalog);
    let inFlight = 0;
    let most = 0;
    const started: bigint[] = [];
    s.catalog.readRowsAt = async (...args) => {
      started.push(args[3]);
      inFlight++;
      most = Math.max(most, inFlight);
      // Later timestamps answer first: the rows must still be used in commit order.
      await new Promise((r) => setTimeout(r, 40 - stamps.findIndex((n) => ts(n) === args[3])));
      inFlight--;
      return read(...args);
    };
    await s.write(stamps.map((at) => keysUpdate(at, ['1'])));
    expect(most).toBe(READS_AHEAD);
    expect(started).toEqual(stamps.map(ts));
    expect(s.catalog.reads).toHaveLength(stamps.length);
    expect(s.replica.rows('people')).toEqual([{ Id: '1', Name: 'n30' }]);
  });

  it('writes nothing of a batch whose read at one commit timestamp fails, the reads before it included', async () => {
    const s = setup();
    s.catalog.versions.push({ from: ts(0), schema: V1 });
    for (const at of [1, 2, 3])
      s.catalog.rows.push({
        at: ts(at),
        table: 'People',
        id: String(at),
        row: { Id: String(at), Name: 'x' },
      });
    const read = s.catalog.readRowsAt.bind(s.catalog);
    s.catalog.readRowsAt = async (...args) => {
      if (args[3] === ts(2)) throw Object.assign(new Error('injected UNAVAILABLE'), { code: 14 });
      return read(...args);
    };
    const updates = [1, 2, 3].map((at) => keysUpdate(at, [String(at)]));
    await expect(s.write(updates)).rejects.toThrow('injected UNAVAILABLE');
    expect(s.replica.rows('people')).toEqual([]);
  });

  it('reads stored generated columns at commit, and keeps a column only the read shows', async () => {
    const s = setup();
    const generated: TableSchema = {
      ...V1,
      columns: [
        ...V1.columns,
        col('Upper', 'STRING', 3, { generated: 'stored' }),
        col('Tokens', 'TOKENLIST', 4, { hidden: true, generated: 'virtual' }),
      ],
    };
    const later: TableSchema = { ...generated, columns: [...generated.columns, col('Added', 'INT64', 5)] };
    s.catalog.versions.push({ from: ts(0), schema: generated }, { from: ts(10), schema: later });
    s.catalog.rows.push(
      { at: ts(1), table: 'People', id: '1', row: { Id: '1', Name: 'ann', Upper: 'ANN' } },
      { at: ts(12), table: 'People', id: '1', row: { Id: '1', Name: 'ann', Upper: 'ANN', Added: '7' } },
      { at: ts(13), table: 'People', id: '1', row: { Id: '1', Name: 'bo', Upper: 'BO', Added: '7' } },
    );
    await s.write([insertNamed(1, '1', 'ann')]);
    expect(s.replica.rows('people')).toEqual([{ Id: '1', Name: 'ann', Upper: 'ANN' }]);
    // A NEW_VALUES update of Name alone: the record does not show Added (set by a transaction this instance
    // never saw), the read at the commit timestamp does, and the replica gains it.
    await s.write([
      record({
        at: ts(13),
        modType: 'UPDATE',
        capture: 'NEW_VALUES',
        columns: V1_COLUMNS,
        mods: [{ id: '1', values: { Name: 'bo' } }],
      }),
    ]);
    expect(s.replica.rows('people')).toEqual([{ Id: '1', Name: 'bo', Upper: 'BO', Added: '7' }]);
    expect(s.replica.table('people')?.fields.map((f) => f.name)).toEqual(['Id', 'Name', 'Upper', 'Added']);
  });

  it('leaves a table SLUICE_TABLES does not replicate, logging it once', async () => {
    const s = setup({ People: { replica: 'people' }, Audit: false });
    s.catalog.versions.push({ from: ts(0), schema: V1 }, { from: ts(0), schema: { ...V1, name: 'Audit' } });
    const audit = (at: number) =>
      record({
        at: ts(at),
        table: 'Audit',
        columns: V1_COLUMNS,
        mods: [{ id: '1' }],
      });
    await s.write([audit(1), audit(2)]);
    await s.write([audit(3)]);
    const skipped = s.lines.filter((l) => l.message === 'table.not-replicated');
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatchObject({
      table: 'Audit',
      reason: expect.stringMatching(/excluded in SLUICE_TABLES/),
    });
    expect(s.replica.table('audit')).toBeUndefined();
  });

  it('names the fix when a read at a commit timestamp is older than the version retention', async () => {
    const s = setup();
    s.catalog.versions.push({ from: ts(0), schema: V1 });
    s.catalog.readRowsAt = async () => {
      throw Object.assign(
        new Error(
          'Read timestamp is earlier than the earliest version time; it is older than the version_retention_period',
        ),
        { code: 9 },
      );
    };
    const failure = await s.write([keysUpdate(1, ['1'])]).then(
      () => undefined,
      (e: unknown) => e as { kind?: string; message?: string },
    );
    expect(failure?.kind).toBe('permanent');
    expect(failure?.message).toMatch(
      /older than the database's version_retention_period\. Raise the retention .*value_capture_type = 'NEW_ROW'/,
    );
  });
});
