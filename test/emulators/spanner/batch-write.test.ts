/**
 * BatchWrite through the official client, both dialects: one response per group with its status, groups
 * applied independently, the official emulator's codes and messages for each constraint violation
 * (FOREIGN KEY and CHECK included), the index-aware mutation limit, and stream faults set through the admin
 * endpoint — with the emulator's record of what each group did.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { type Database, MutationGroup } from '@google-cloud/spanner';
import { createTestDatabase, type TestDatabase } from '../../../local/emulators/spanner/client';
import { type RunningSpannerEmulator, startSpannerEmulator } from '../../../local/emulators/spanner/server';
import { ORDERS_AND_WIDE_DDL } from './support/constrained-tables';

type Dialect = 'GOOGLE_STANDARD_SQL' | 'POSTGRESQL';

const DDL: Record<Dialect, string[]> = {
  GOOGLE_STANDARD_SQL: [
    `CREATE TABLE Customers (Id INT64 NOT NULL, Name STRING(10) NOT NULL, Code BYTES(4), Tags ARRAY<STRING(3)>)
     PRIMARY KEY (Id)`,
    'CREATE UNIQUE INDEX CustomersByName ON Customers (Name)',
    ...ORDERS_AND_WIDE_DDL.GOOGLE_STANDARD_SQL,
  ],
  POSTGRESQL: [
    `CREATE TABLE customers (id bigint NOT NULL PRIMARY KEY, name varchar(10) NOT NULL, code bytea,
     tags varchar(3)[])`,
    'CREATE UNIQUE INDEX customers_by_name ON customers (name)',
    ...ORDERS_AND_WIDE_DDL.POSTGRESQL,
  ],
};

interface Response {
  indexes: number[];
  status: { code: number; message?: string };
  commitTimestamp?: { seconds: string } | null;
}

let emu: RunningSpannerEmulator;
const dbs: Partial<Record<Dialect, TestDatabase>> = {};

beforeAll(async () => {
  emu = await startSpannerEmulator({ port: 0, changeStreams: false });
  for (const d of ['GOOGLE_STANDARD_SQL', 'POSTGRESQL'] as const)
    dbs[d] = await createTestDatabase(emu, d, DDL[d]);
});

afterEach(() => {
  emu.admin.faults.clear();
  emu.admin.setLimits({ mutationsPerCommit: 80_000 });
});

afterAll(async () => {
  for (const t of Object.values(dbs)) await t?.close();
  await emu?.stop();
});

/** Runs a batch write; resolves with the responses and the stream's error, if any. */
function batchWrite(
  db: Database,
  groups: MutationGroup[],
): Promise<{ responses: Response[]; error?: { code: number; message: string } }> {
  const responses: Response[] = [];
  return new Promise((resolve) => {
    db.batchWriteAtLeastOnce(groups)
      .on('data', (r) => responses.push(r as Response))
      .on('error', (e: { code: number; message: string }) => resolve({ responses, error: e }))
      .on('end', () => resolve({ responses }));
  });
}

function group(fn: (g: MutationGroup) => void): MutationGroup {
  const g = new MutationGroup();
  fn(g);
  return g;
}

const n = (d: Dialect, gsql: string) =>
  d === 'POSTGRESQL' ? gsql.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase() : gsql;

/** A row object with the dialect's column names. */
function row(d: Dialect, values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [n(d, k), v]));
}

describe.each(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'] as const)('%s', (d) => {
  const db = () => (dbs[d] as TestDatabase).database;
  const T = (name: string) => n(d, name);

  test('one response per group, in order, each applied on its own', async () => {
    const { responses, error } = await batchWrite(db(), [
      group((g) => g.insert(T('Customers'), row(d, { Id: '1', Name: 'Ann' }))),
      group((g) => g.insert(T('Customers'), row(d, { Id: '1', Name: 'Ann again' }))),
      group((g) => g.insert(T('Customers'), row(d, { Id: '2', Name: 'Bo' }))),
    ]);
    expect(error).toBeUndefined();
    expect(responses.map((r) => [r.indexes, r.status.code])).toEqual([
      [[0], 0],
      [[1], 6],
      [[2], 0],
    ]);
    expect(responses[0]?.commitTimestamp?.seconds).toBeDefined();
    expect(responses[1]?.commitTimestamp ?? null).toBeNull();
    expect(responses[1]?.status.message).toBe(`Table ${T('Customers')}: Row {Int64(1)} already exists.`);
    const [rows] = await db().run({
      sql: `SELECT ${T('Id')} FROM ${T('Customers')} ORDER BY ${T('Id')}`,
      json: true,
    });
    expect(rows.map((r) => String(Object.values(r as object)[0]))).toEqual(['1', '2']);
  });

  const cases = [
    [
      'NOT NULL, explicit null',
      (D: Dialect) => ({ insert: [T('Customers'), row(D, { Id: '10', Name: null })] }),
      9,
      (D: Dialect) =>
        `Cannot specify a null value for column: ${n(D, 'Customers')}.${n(D, 'Name')} in table: ${n(D, 'Customers')}`,
    ],
    [
      'NOT NULL, left out of a new row',
      (D: Dialect) => ({ insert: [T('Customers'), row(D, { Id: '11' })] }),
      9,
      (D: Dialect) =>
        `A new row in table ${n(D, 'Customers')} does not specify a non-null value for NOT NULL column: ${n(D, 'Name')}`,
    ],
    [
      'over-long STRING',
      (D: Dialect) => ({ insert: [T('Customers'), row(D, { Id: '12', Name: 'ten chars!+' })] }),
      9,
      (D: Dialect) =>
        `New value exceeds the maximum size limit for this column: ${n(D, 'Customers')}.${n(D, 'Name')}, size: 11, limit: 10.`,
    ],
    [
      'over-long BYTES',
      (D: Dialect) => ({ insert: [T('Customers'), row(D, { Id: '13', Name: 'b', Code: Buffer.alloc(5) })] }),
      9,
      (D: Dialect) =>
        `New value exceeds the maximum size limit for this column: ${n(D, 'Customers')}.${n(D, 'Code')}, size: 5, limit: 4.`,
    ],
    [
      'over-long array element',
      (D: Dialect) => ({ insert: [T('Customers'), row(D, { Id: '14', Name: 'c', Tags: ['ok', 'long'] })] }),
      9,
      (D: Dialect) =>
        `New value exceeds the maximum size limit for this column: ${n(D, 'Customers')}.${n(D, 'Tags')}, size: 4, limit: 3.`,
    ],
    [
      'foreign key',
      (D: Dialect) => ({ insert: [T('Orders'), row(D, { Id: '1', Customer: '404', Qty: '1' })] }),
      9,
      (D: Dialect) =>
        `Foreign key \`${D === 'POSTGRESQL' ? 'orders_customer' : 'OrdersCustomer'}\` constraint violation on table \`${n(D, 'Orders')}\`. Cannot find referenced key \`{Int64(404)}\` in table \`${n(D, 'Customers')}\`.`,
    ],
    [
      'CHECK',
      (D: Dialect) => ({ insert: [T('Orders'), row(D, { Id: '2', Qty: '0' })] }),
      11,
      (D: Dialect) =>
        `Check constraint \`${n(D, 'Orders')}\`.\`${D === 'POSTGRESQL' ? 'qty_positive' : 'QtyPositive'}\` is violated for key {Int64(2)}`,
    ],
    ['missing table', () => ({ insert: ['Nope', { Id: '1' }] }), 5, () => 'Table not found: Nope'],
    [
      'missing column',
      (D: Dialect) => ({ insert: [T('Customers'), row(D, { Id: '15', Name: 'x', Nope: 1 })] }),
      5,
      (D: Dialect) =>
        `Column not found in table ${n(D, 'Customers')}: ${D === 'POSTGRESQL' ? 'nope' : 'Nope'}`,
    ],
    [
      'update of a missing row',
      (D: Dialect) => ({ update: [T('Customers'), row(D, { Id: '16', Name: 'x' })] }),
      5,
      (D: Dialect) => `Table ${n(D, 'Customers')}: Row {Int64(16)} not found.`,
    ],
    [
      'unique index',
      (D: Dialect) => ({ insert: [T('Customers'), row(D, { Id: '17', Name: 'Bo' })] }),
      6,
      (D: Dialect) =>
        `UNIQUE violation on index ${D === 'POSTGRESQL' ? 'customers_by_name' : 'CustomersByName'},  duplicate key: {String("Bo")} in this transaction.`,
    ],
  ] as const;
  // PostgreSQL's bytea has no declared length.
  test.each(cases.filter((c) => d === 'GOOGLE_STANDARD_SQL' || c[0] !== 'over-long BYTES'))(
    '%s: the group gets the service code and message, the next group still applies',
    async (_what, make, code, message) => {
      const spec = make(d) as {
        insert?: [string, Record<string, unknown>];
        update?: [string, Record<string, unknown>];
      };
      const bad = group((g) =>
        spec.insert
          ? g.insert(...spec.insert)
          : g.update(...(spec.update as [string, Record<string, unknown>])),
      );
      const okId = String(100 + Math.floor(Math.random() * 1e6));
      const ok = group((g) => g.insert(T('Customers'), row(d, { Id: okId, Name: `k${okId.slice(-5)}` })));
      const { responses, error } = await batchWrite(db(), [bad, ok]);
      expect(error).toBeUndefined();
      expect(responses.map((r) => r.status.code)).toEqual([code, 0]);
      expect(responses[0]?.status.message).toBe(message(d));
    },
  );

  test('deleting a referenced row fails with the foreign key named; the referencing row stays', async () => {
    await db()
      .table(T('Customers'))
      .insert(row(d, { Id: '30', Name: 'Ref' }));
    await db()
      .table(T('Orders'))
      .insert(row(d, { Id: '30', Customer: '30', Qty: '2' }));
    const { responses } = await batchWrite(db(), [group((g) => g.deleteRows(T('Customers'), ['30']))]);
    expect(responses[0]?.status.code).toBe(9);
    expect(responses[0]?.status.message).toMatch(
      /constraint violation when deleting or updating referenced key `\{Int64\(30\)\}`/,
    );
  });

  test('the request-level mutation limit counts index entries and rejects the whole request', async () => {
    // Wide: 4 columns, 3 of them in one index each: 7 mutations per insert. The limit is lowered to 100.
    emu.admin.setLimits({ mutationsPerCommit: 100 });
    const insert = (id: number) =>
      group((g) => g.insert(T('Wide'), row(d, { Id: String(id), A: 'a', B: 'b', C: 'c' })));
    const fits = await batchWrite(
      db(),
      Array.from({ length: 14 }, (_, i) => insert(1000 + i)),
    );
    expect(fits.error).toBeUndefined();
    expect(fits.responses).toHaveLength(14);
    const before = emu.admin.batchWrites(db().formattedName_).length;
    const over = await batchWrite(
      db(),
      Array.from({ length: 15 }, (_, i) => insert(2000 + i)),
    );
    expect(over.responses).toEqual([]);
    expect(over.error?.code).toBe(3);
    expect(over.error?.message).toMatch(/too many mutations.*\(Maximum number: 100\)/);
    const [rows] = await db().run(`SELECT COUNT(*) FROM ${T('Wide')} WHERE ${T('Id')} >= 2000`);
    expect(Number((rows[0] as unknown as Array<{ value: unknown }>)[0]?.value)).toBe(0);
    const record = emu.admin.batchWrites(db().formattedName_).slice(before)[0];
    expect(record).toMatchObject({ groups: 15, mutations: 105, outcomes: [] });
  });
});

describe('the request size limit', () => {
  const db = () => (dbs.GOOGLE_STANDARD_SQL as TestDatabase).database;
  const MiB = 1024 * 1024;
  // Notes of 2 MiB each (STRING(MAX) holds 2.5 MiB); the orders reference no customer.
  const notes = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) =>
      group((g) => g.insert('Orders', { Id: String(from + i), Qty: '1', Note: 'n'.repeat(2 * MiB) })),
    );
  const count = async (from: number) => {
    const [rows] = await db().run(`SELECT COUNT(*) FROM Orders WHERE Id >= ${from} AND Id < ${from + 1000}`);
    return Number((rows[0] as unknown as Array<{ value: unknown }>)[0]?.value);
  };

  test('requests far above gRPC’s 4 MiB default are received and applied', async () => {
    const eight = await batchWrite(db(), notes(7000, 4));
    expect(eight.error).toBeUndefined();
    expect(eight.responses.map((r) => r.status.code)).toEqual([0, 0, 0, 0]);
    expect(await count(7000)).toBe(4);
  });

  test('a request over the service’s 100 MiB is refused whole with INVALID_ARGUMENT naming the limit', async () => {
    const before = emu.admin.batchWrites(db().formattedName_).length;
    const over = await batchWrite(db(), notes(8000, 51));
    expect(over.responses).toEqual([]);
    expect(over.error?.code).toBe(3);
    expect(over.error?.message).toMatch(/Request payload size exceeds the limit: 104857600 bytes\./);
    expect(await count(8000)).toBe(0);
    expect(emu.admin.batchWrites(db().formattedName_).length).toBe(before);
  }, 60_000);
});

describe('stream faults through the admin endpoint', () => {
  const db = () => (dbs.GOOGLE_STANDARD_SQL as TestDatabase).database;
  const upserts = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => group((g) => g.upsert('Wide', { Id: String(from + i), A: 'x' })));

  async function addFault(rule: Record<string, unknown>): Promise<void> {
    const res = await fetch(`${emu.adminUrl}/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'BatchWrite', times: 1, ...rule }),
    });
    expect(res.status).toBe(200);
  }

  test('a stream broken after K responses: K groups applied and reported, the rest not applied', async () => {
    await addFault({ afterItems: 3, code: 14 });
    const { responses, error } = await batchWrite(db(), upserts(5000, 6));
    expect(responses.map((r) => r.indexes[0])).toEqual([0, 1, 2]);
    expect(error?.code).toBe(14);
    const commits = emu.admin.batchWriteCommits(db().formattedName_);
    expect([5000, 5001, 5002, 5003, 5004, 5005].map((id) => commits.get(`Wide ["${id}"]`) ?? 0)).toEqual([
      1, 1, 1, 0, 0, 0,
    ]);
  });

  test('with applyAfterBreak the unreported groups are applied: their answers were lost in transit', async () => {
    await addFault({ afterItems: 2, code: 14, applyAfterBreak: true });
    const { responses, error } = await batchWrite(db(), upserts(6000, 4));
    expect(responses).toHaveLength(2);
    expect(error?.code).toBe(14);
    const last = emu.admin.batchWrites(db().formattedName_).at(-1);
    expect(last?.outcomes.map((o) => [o.index, o.code, o.reported])).toEqual([
      [0, 0, true],
      [1, 0, true],
      [2, 0, false],
      [3, 0, false],
    ]);
    const [rows] = await db().run('SELECT COUNT(*) AS n FROM Wide WHERE Id >= 6000 AND Id < 7000');
    expect(Number((rows[0] as unknown as Array<{ value: unknown }>)[0]?.value)).toBe(4);
  });

  test('items: chosen groups answer a transient status and the stream goes on', async () => {
    await addFault({ items: [1, 3], code: 10, message: 'Transaction was aborted.' });
    const { responses, error } = await batchWrite(db(), upserts(7000, 4));
    expect(error).toBeUndefined();
    expect(responses.map((r) => r.status.code)).toEqual([0, 10, 0, 10]);
    const res = await fetch(
      `${emu.adminUrl}/batch-writes?database=${encodeURIComponent(db().formattedName_)}`,
    );
    const records = (await res.json()) as Array<{ outcomes: Array<{ code: number }> }>;
    expect(records.at(-1)?.outcomes.map((o) => o.code)).toEqual([0, 10, 0, 10]);
  });
});

test('constraints are printed back by GetDatabaseDdl and keep their tables from being dropped', async () => {
  const db = (dbs.GOOGLE_STANDARD_SQL as TestDatabase).database;
  const [ddl] = await db.getSchema();
  const orders = ddl.find((s) => s.startsWith('CREATE TABLE Orders')) ?? '';
  expect(orders).toContain('CONSTRAINT OrdersCustomer FOREIGN KEY (Customer) REFERENCES Customers (Id)');
  expect(orders).toContain('CONSTRAINT QtyPositive CHECK (Qty > 0)');
  const [op] = await db.updateSchema(['DROP INDEX CustomersByName']);
  await op.promise();
  await expect(db.updateSchema(['DROP TABLE Customers']).then(([o]) => o.promise())).rejects.toMatchObject({
    code: 9,
    message: expect.stringContaining('OrdersCustomer'),
  });
});

test('a partial update keeps INT64 values above 2^53 in the columns it does not name', async () => {
  const t = await createTestDatabase(emu, 'GOOGLE_STANDARD_SQL', [
    'CREATE TABLE Big (Id INT64 NOT NULL, V INT64, S STRING(MAX)) PRIMARY KEY (Id)',
  ]);
  await t.database.table('Big').insert({ Id: '1', V: '9223372036854775807', S: 'a' });
  await t.database.table('Big').update({ Id: '1', S: 'b' });
  const [rows] = await t.database.run({
    sql: 'SELECT V FROM Big',
    json: true,
    jsonOptions: { wrapNumbers: true },
  });
  expect(rows).toEqual([{ V: { value: '9223372036854775807' } }]);
  await t.close();
});
