/**
 * INT64 values keep every digit in change records read through the official client, in both dialects:
 * keys, new values and old values over the whole range, and rows updated without naming the column.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { Spanner } from '@google-cloud/spanner';
import type { DataChangeRecord, Dialect } from '../../../shared/domain/change-record';
import { walkDag } from './change-streams/client-read';
import { dialectDatabases } from './support/dialect-databases';

const EXTREMES = [
  '-9223372036854775808',
  '-9007199254740993',
  '9007199254740993',
  '3074457345618258607',
  '9223372036854775807',
];

const spanner = dialectDatabases({
  GOOGLE_STANDARD_SQL: [
    'CREATE TABLE T (K INT64 NOT NULL, V INT64, W STRING(MAX), A ARRAY<INT64>) PRIMARY KEY (K)',
    "CREATE CHANGE STREAM S FOR T OPTIONS (value_capture_type = 'NEW_ROW_AND_OLD_VALUES')",
  ],
  POSTGRESQL: [
    'CREATE TABLE t (k bigint NOT NULL PRIMARY KEY, v bigint, w varchar, a bigint[])',
    "CREATE CHANGE STREAM s FOR t WITH (value_capture_type = 'NEW_ROW_AND_OLD_VALUES')",
  ],
});

const names = (dialect: Dialect) =>
  dialect === 'POSTGRESQL'
    ? { table: 't', stream: 's', k: 'k', v: 'v', w: 'w', a: 'a' }
    : { table: 'T', stream: 'S', k: 'K', v: 'V', w: 'W', a: 'A' };

test.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  '%s: keys, new values and old values keep every digit of INT64',
  async (dialect) => {
    const db = spanner.db(dialect);
    const n = names(dialect);
    const start = spanner.emu.admin.nowNs();
    const rows = EXTREMES.map((k, i) => ({
      [n.k]: Spanner.int(k),
      [n.v]: Spanner.int(EXTREMES[(i + 1) % EXTREMES.length]!),
      [n.w]: 'x',
      [n.a]: [Spanner.int(k)],
    }));
    await db.database.table(n.table).insert(rows);
    // An update that does not name the INT64 column must keep its stored value exactly.
    await db.database.table(n.table).update(EXTREMES.map((k) => ({ [n.k]: Spanner.int(k), [n.w]: 'y' })));
    await db.database.table(n.table).deleteRows(EXTREMES.map((k) => [k] as unknown as string));
    const end = spanner.emu.admin.nowNs();

    const walk = await walkDag(db.database, dialect, n.stream, start, end);
    const mods = walk.data.flatMap((r: DataChangeRecord) => r.mods.map((m) => ({ type: r.modType, ...m })));
    const byType = (t: string) => mods.filter((m) => m.type === t);
    const sortByKey = <T extends { keys: Record<string, unknown> }>(list: T[]) =>
      [...list].sort((a, b) => (BigInt(a.keys[n.k] as string) < BigInt(b.keys[n.k] as string) ? -1 : 1));
    const expectedNew = EXTREMES.map((_, i) => EXTREMES[(i + 1) % EXTREMES.length]);

    const inserts = sortByKey(byType('INSERT'));
    expect(inserts.map((m) => m.keys[n.k])).toEqual(EXTREMES);
    const sortedNew = [...EXTREMES]
      .map((k, i) => [k, expectedNew[i]] as const)
      .sort((a, b) => (BigInt(a[0]) < BigInt(b[0]) ? -1 : 1));
    expect(inserts.map((m) => m.newValues[n.v])).toEqual(sortedNew.map(([, v]) => v));
    expect(inserts.map((m) => m.newValues[n.a])).toEqual(sortedNew.map(([k]) => [k]));

    const updates = sortByKey(byType('UPDATE'));
    expect(updates.map((m) => m.keys[n.k])).toEqual(EXTREMES);
    expect(updates.map((m) => m.newValues[n.v])).toEqual(sortedNew.map(([, v]) => v));
    expect(updates.map((m) => m.oldValues[n.w])).toEqual(EXTREMES.map(() => 'x'));

    const deletes = sortByKey(byType('DELETE'));
    expect(deletes.map((m) => m.keys[n.k])).toEqual(EXTREMES);
    expect(deletes.map((m) => m.oldValues[n.v])).toEqual(sortedNew.map(([, v]) => v));
  },
);

test('writes that do not name an INT64 column (mutation or DML) leave it exact', async () => {
  const db = spanner.g;
  const read = async () => {
    const [rows] = await db.database.run({
      sql: 'SELECT V FROM T WHERE K = 42',
      json: true,
      jsonOptions: { wrapNumbers: true },
    });
    return (rows[0] as { V: { value: string } }).V.value;
  };
  await db.database.table('T').insert({ K: Spanner.int('42'), V: Spanner.int('9007199254740993'), W: 'a' });
  await db.database.table('T').update({ K: Spanner.int('42'), W: 'b' });
  expect(await read()).toBe('9007199254740993');
  await db.database.runTransactionAsync(async (tx) => {
    await tx.runUpdate("UPDATE T SET W = 'c' WHERE K = 42");
    await tx.commit();
  });
  expect(await read()).toBe('9007199254740993');
});
