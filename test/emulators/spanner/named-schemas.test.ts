/**
 * Tables in named schemas through the official client, both dialects: CREATE / DROP SCHEMA with the service's
 * codes and messages, a table `sch.T` beside a default-schema `T` of the same name, mutations, reads and
 * queries by the qualified name, indexes, INFORMATION_SCHEMA (TABLE_SCHEMA `sch`, TABLE_NAME `T`; SCHEMATA),
 * GetDatabaseDdl, and change records whose `table_name` is the qualified name (FOR ALL and FOR sch.T).
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { TestDatabase } from '../../../local/emulators/spanner/client';
import type { Dialect } from '../../../shared/domain/change-record';
import { walkDag } from './change-streams/client-read';
import { dialectDatabases } from './support/dialect-databases';

const t = dialectDatabases({
  GOOGLE_STANDARD_SQL: [
    'CREATE SCHEMA sales',
    'CREATE TABLE Orders (Id INT64 NOT NULL, Note STRING(MAX)) PRIMARY KEY (Id)',
    'CREATE TABLE sales.Orders (Id INT64 NOT NULL, Amount INT64, Note STRING(MAX)) PRIMARY KEY (Id)',
    'CREATE INDEX sales.OrdersByAmount ON `sales`.`Orders` (Amount)',
    'CREATE CHANGE STREAM AllStream FOR ALL',
    'CREATE CHANGE STREAM OneStream FOR sales.Orders',
  ],
  POSTGRESQL: [
    'CREATE SCHEMA sales',
    'CREATE TABLE orders (id bigint NOT NULL PRIMARY KEY, note varchar)',
    'CREATE TABLE sales.orders (id bigint NOT NULL PRIMARY KEY, amount bigint, note varchar)',
    'CREATE INDEX orders_by_amount ON "sales"."orders" (amount)',
    'CREATE CHANGE STREAM allstream FOR ALL',
    'CREATE CHANGE STREAM onestream FOR sales.orders',
  ],
});

const n = (dialect: Dialect) =>
  dialect === 'POSTGRESQL'
    ? {
        db: () => t.pg,
        plain: 'orders',
        named: 'sales.orders',
        id: 'id',
        amount: 'amount',
        note: 'note',
        all: 'allstream',
        one: 'onestream',
      }
    : {
        db: () => t.g,
        plain: 'Orders',
        named: 'sales.Orders',
        id: 'Id',
        amount: 'Amount',
        note: 'Note',
        all: 'AllStream',
        one: 'OneStream',
      };

async function ddl(db: TestDatabase, statements: string[]): Promise<void> {
  const [op] = await db.database.updateSchema(statements);
  await op.promise();
}

async function ddlError(db: TestDatabase, statement: string): Promise<{ code?: number; details?: string }> {
  try {
    await ddl(db, [statement]);
  } catch (err) {
    return err as { code?: number; details?: string };
  }
  throw new Error(`expected ${statement} to fail`);
}

test.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  '%s: sch.T and T are two tables; mutations, reads and queries use the qualified name',
  async (dialect) => {
    const x = n(dialect);
    const db = x.db().database;
    await db.table(x.plain).insert({ [x.id]: 1, [x.note]: 'plain' });
    await db.table(x.named).insert([
      { [x.id]: 1, [x.amount]: 10, [x.note]: 'named' },
      { [x.id]: 2, [x.amount]: 20, [x.note]: 'named' },
    ]);
    const [plainRows] = await db.table(x.plain).read({ keys: ['1'], columns: [x.id, x.note], json: true });
    expect(plainRows).toEqual([{ [x.id]: 1, [x.note]: 'plain' }]);
    const [namedRows] = await db
      .table(x.named)
      .read({ keySet: { all: true }, columns: [x.id, x.amount], json: true });
    expect(namedRows).toEqual([
      { [x.id]: 1, [x.amount]: 10 },
      { [x.id]: 2, [x.amount]: 20 },
    ]);
    const from = dialect === 'POSTGRESQL' ? '"sales"."orders"' : '`sales`.`Orders`';
    const [sum] = await db.run({ sql: `SELECT SUM(${x.amount}) AS s FROM ${from}`, json: true });
    expect(sum).toEqual([{ s: 30 }]);
    const [joined] = await db.run({
      sql: `SELECT p.${x.note} AS a, s.${x.note} AS b FROM ${x.plain} p JOIN ${x.named} s ON p.${x.id} = s.${x.id}`,
      json: true,
    });
    expect(joined).toEqual([{ a: 'plain', b: 'named' }]);
    const [updated] = await db.runTransactionAsync(async (tx) => {
      const out = await tx.runUpdate(`UPDATE ${x.named} SET ${x.note} = 'dml' WHERE ${x.id} = 2`);
      await tx.commit();
      return out;
    });
    expect(updated).toBe(1);
    if (dialect === 'POSTGRESQL') {
      const [viaPublic] = await db.run({ sql: 'SELECT note FROM public.orders', json: true });
      expect(viaPublic).toEqual([{ note: 'plain' }]);
    }
    const [byIndex] = await db.table(x.named).read({
      index: dialect === 'POSTGRESQL' ? 'sales.orders_by_amount' : 'sales.OrdersByAmount',
      keys: ['20'],
      columns: [x.id],
      json: true,
    });
    expect(byIndex).toEqual([{ [x.id]: 2 }]);
    await db.table(x.named).deleteRows(['1', '2']);
    await db.table(x.plain).deleteRows(['1']);
  },
);

test.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  '%s: INFORMATION_SCHEMA splits a named-schema name into TABLE_SCHEMA and TABLE_NAME',
  async (dialect) => {
    const x = n(dialect);
    const db = x.db().database;
    const pgd = dialect === 'POSTGRESQL';
    const def = pgd ? 'public' : '';
    const [tables] = await db.run({
      sql: pgd
        ? "SELECT table_schema, table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' ORDER BY table_schema, table_name"
        : "SELECT TABLE_SCHEMA, TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_SCHEMA, TABLE_NAME",
      json: true,
    });
    const k = (s: string) => (pgd ? s.toLowerCase() : s);
    expect(tables).toEqual([
      { [k('TABLE_SCHEMA')]: def, [k('TABLE_NAME')]: x.plain },
      { [k('TABLE_SCHEMA')]: 'sales', [k('TABLE_NAME')]: x.plain },
    ]);
    const [columns] = await db.run({
      sql: pgd
        ? "SELECT column_name FROM information_schema.columns WHERE table_schema = 'sales' AND table_name = $1 ORDER BY ordinal_position"
        : "SELECT COLUMN_NAME FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = 'sales' AND TABLE_NAME = @t ORDER BY ORDINAL_POSITION",
      params: pgd ? { p1: x.plain } : { t: x.plain },
      json: true,
    });
    expect(columns.map((r) => Object.values(r as object)[0])).toEqual([x.id, x.amount, x.note]);
    const [indexCols] = await db.run({
      sql: pgd
        ? "SELECT index_name, column_name FROM information_schema.index_columns WHERE table_schema = 'sales' ORDER BY index_name"
        : "SELECT INDEX_NAME, COLUMN_NAME FROM INFORMATION_SCHEMA.INDEX_COLUMNS WHERE TABLE_SCHEMA = 'sales' ORDER BY INDEX_NAME",
      json: true,
    });
    expect(indexCols.map((r) => Object.values(r as object)).sort()).toEqual(
      [
        [pgd ? 'orders_by_amount' : 'OrdersByAmount', x.amount],
        ['PRIMARY_KEY', x.id],
      ].sort(),
    );
    const [schemata] = await db.run({
      sql: pgd
        ? 'SELECT schema_name FROM information_schema.schemata ORDER BY schema_name'
        : 'SELECT SCHEMA_NAME FROM INFORMATION_SCHEMA.SCHEMATA ORDER BY SCHEMA_NAME',
      json: true,
    });
    expect(schemata.map((r) => Object.values(r as object)[0])).toEqual([def, 'sales']);
    const [streamTables] = await db.run({
      sql: pgd
        ? 'SELECT table_schema, table_name FROM information_schema.change_stream_tables'
        : 'SELECT TABLE_SCHEMA, TABLE_NAME FROM INFORMATION_SCHEMA.CHANGE_STREAM_TABLES',
      json: true,
    });
    expect(streamTables.map((r) => Object.values(r as object))).toEqual([['sales', x.plain]]);
    const [statements] = await db.getSchema();
    expect(statements[0]).toBe('CREATE SCHEMA sales');
    expect(statements.some((s) => s.startsWith(`CREATE TABLE ${x.named} (`))).toBe(true);
  },
);

test.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  '%s: change records name a named-schema table by its qualified name, in FOR ALL and FOR sch.T streams',
  async (dialect) => {
    const x = n(dialect);
    const db = x.db().database;
    const start = t.emu.admin.nowNs();
    await db.table(x.named).insert({ [x.id]: 7, [x.amount]: 70, [x.note]: 'n' });
    await db.table(x.plain).insert({ [x.id]: 7, [x.note]: 'p' });
    const end = t.emu.admin.nowNs();
    const all = await walkDag(db, dialect, x.all, start, end);
    // Records of two tables may come from different partitions: compared in name order.
    const seen = all.data.map((r) => [r.tableName, r.mods[0]?.keys] as const);
    seen.sort(([a], [b]) => (a === b ? 0 : a === x.named ? -1 : 1));
    expect(seen).toEqual([
      [x.named, { [x.id]: '7' }],
      [x.plain, { [x.id]: '7' }],
    ]);
    const one = await walkDag(db, dialect, x.one, start, end);
    expect(one.data.map((r) => r.tableName)).toEqual([x.named]);
    await db.table(x.named).deleteRows(['7']);
    await db.table(x.plain).deleteRows(['7']);
  },
);

test.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  '%s: missing, duplicate, reserved and non-empty schemas fail with the service codes and messages',
  async (dialect) => {
    const x = n(dialect);
    const db = x.db();
    const col = dialect === 'POSTGRESQL' ? 'id bigint PRIMARY KEY' : 'Id INT64';
    const pk = dialect === 'POSTGRESQL' ? '' : ' PRIMARY KEY (Id)';
    expect(await ddlError(db, `CREATE TABLE nowhere.T (${col})${pk}`)).toMatchObject({
      code: 5,
      details: 'Schema not found: nowhere',
    });
    expect(await ddlError(db, 'CREATE SCHEMA sales')).toMatchObject({
      code: 9,
      details: 'Duplicate name in schema: sales.',
    });
    expect(await ddlError(db, 'CREATE SCHEMA spanner_sys2')).toMatchObject({
      code: 3,
      details: 'Schema name not valid: spanner_sys2.',
    });
    expect(await ddlError(db, 'DROP SCHEMA nowhere')).toMatchObject({
      code: 5,
      details: 'Schema not found: nowhere',
    });
    const dropped = await ddlError(db, 'DROP SCHEMA sales');
    expect(dropped.code).toBe(9);
    expect(dropped.details).toContain(
      `Cannot drop schema sales while it has dependencies.\nDependent tables:${x.named}`,
    );
    await ddl(db, ['CREATE SCHEMA IF NOT EXISTS sales', 'CREATE SCHEMA scratch']);
    await ddl(db, [`CREATE TABLE scratch.T (${col})${pk}`, 'DROP TABLE scratch.T', 'DROP SCHEMA scratch']);
    await ddl(db, ['DROP SCHEMA IF EXISTS scratch']);
  },
);

test.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  '%s: interleaving and foreign keys name named-schema tables; PostgreSQL public.t is t in a FOR clause',
  async (dialect) => {
    const db = n(dialect).db();
    const pgd = dialect === 'POSTGRESQL';
    await ddl(
      db,
      pgd
        ? [
            'CREATE SCHEMA shop',
            'CREATE TABLE shop.parent (pid bigint NOT NULL PRIMARY KEY)',
            'CREATE TABLE shop.child (pid bigint NOT NULL, cid bigint NOT NULL, PRIMARY KEY (pid, cid)) INTERLEAVE IN PARENT shop.parent',
            'CREATE TABLE shop.ref (id bigint NOT NULL PRIMARY KEY, pid bigint, CONSTRAINT fk_ref FOREIGN KEY (pid) REFERENCES shop.parent (pid))',
            'CREATE CHANGE STREAM viapublic FOR public.orders',
          ]
        : [
            'CREATE SCHEMA shop',
            'CREATE TABLE shop.Parent (Pid INT64 NOT NULL) PRIMARY KEY (Pid)',
            'CREATE TABLE shop.Child (Pid INT64 NOT NULL, Cid INT64 NOT NULL) PRIMARY KEY (Pid, Cid), INTERLEAVE IN PARENT shop.Parent',
            'CREATE TABLE shop.Ref (Id INT64 NOT NULL, Pid INT64, CONSTRAINT FkRef FOREIGN KEY (Pid) REFERENCES shop.Parent (Pid)) PRIMARY KEY (Id)',
          ],
    );
    const nm = (s: string) => (pgd ? s.toLowerCase() : s);
    const d = db.database;
    await d.table(`shop.${nm('Parent')}`).insert({ [nm('Pid')]: 1 });
    await d.table(`shop.${nm('Child')}`).insert({ [nm('Pid')]: 1, [nm('Cid')]: 2 });
    await expect(
      d.table(`shop.${nm('Ref')}`).insert({ [nm('Id')]: 1, [nm('Pid')]: 9 }),
    ).rejects.toMatchObject({
      code: 9,
    });
    const [parents] = await d.run({
      sql: pgd
        ? "SELECT table_name, parent_table_name FROM information_schema.tables WHERE table_schema = 'shop' ORDER BY table_name"
        : "SELECT TABLE_NAME, PARENT_TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'shop' ORDER BY TABLE_NAME",
      json: true,
    });
    expect(parents.map((r) => Object.values(r as object))).toEqual([
      [nm('Child'), nm('Parent')],
      [nm('Parent'), null],
      [nm('Ref'), null],
    ]);
    if (pgd) {
      const [tables] = await d.run({
        sql: "SELECT table_schema, table_name FROM information_schema.change_stream_tables WHERE change_stream_name = 'viapublic'",
        json: true,
      });
      expect(tables).toEqual([{ table_schema: 'public', table_name: 'orders' }]);
    }
    const dropped = await ddlError(db, 'DROP SCHEMA shop');
    expect(dropped.details).toContain('Dependent tables:');
  },
);
