/** The catalog from INFORMATION_SCHEMA rows, and typing mutations by it: names, keys, cells and bytes. */
import { plain } from '../../../../shared/domain/log-values';
import { findTable, parseWriterCatalog, type WriterCatalog } from '../../../../shared/domain/writer/catalog';
import { typeMutations } from '../../../../shared/domain/writer/mutations';
import type { MutationInput } from '../../../../shared/domain/writer/request';

/** An INFORMATION_SCHEMA.COLUMNS row as a `json: true` object, GoogleSQL spelling. */
const gsqlColumn = (
  t: string,
  c: string,
  p: number,
  type: string,
  nullable = 'YES',
  generated = 'NEVER',
) => ({
  TABLE_NAME: t,
  COLUMN_NAME: c,
  ORDINAL_POSITION: p,
  SPANNER_TYPE: type,
  IS_NULLABLE: nullable,
  IS_GENERATED: generated,
});

/** INFORMATION_SCHEMA rows as `json: true` objects, GoogleSQL spelling. */
function gsqlCatalog(): WriterCatalog {
  const tables = [{ TABLE_NAME: 'Orders' }, { TABLE_NAME: 'Lines' }];
  const columns = [
    gsqlColumn('Orders', 'Total', 3, 'NUMERIC'),
    gsqlColumn('Orders', 'Id', 1, 'INT64', 'NO'),
    gsqlColumn('Orders', 'Note', 2, 'STRING(MAX)'),
    gsqlColumn('Orders', 'Raw', 4, 'BYTES(MAX)'),
    gsqlColumn('Orders', 'Upper', 5, 'STRING(MAX)', 'YES', 'ALWAYS'),
    gsqlColumn('Orders', 'Vec', 6, 'TOKENLIST'),
    gsqlColumn('Lines', 'OrderId', 1, 'INT64', 'NO'),
    gsqlColumn('Lines', 'At', 2, 'TIMESTAMP', 'NO'),
    gsqlColumn('Lines', 'Qty', 3, 'FLOAT64'),
    gsqlColumn('SomeView', 'X', 1, 'INT64'),
  ];
  const ix = (t: string, i: string, c: string, p: number | null) => ({
    TABLE_NAME: t,
    INDEX_NAME: i,
    COLUMN_NAME: c,
    ORDINAL_POSITION: p,
  });
  const indexes = [
    ix('Orders', 'PRIMARY_KEY', 'Id', 1),
    ix('Orders', 'ByNote', 'Note', 1),
    ix('Orders', 'ByNote', 'Total', null),
    ix('Orders', 'ByTotal', 'Total', 1),
    ix('Lines', 'PRIMARY_KEY', 'At', 2),
    ix('Lines', 'PRIMARY_KEY', 'OrderId', 1),
  ];
  return parseWriterCatalog('GOOGLE_STANDARD_SQL', tables, columns, indexes);
}

test('the catalog: base tables only, columns in order, key in key order, index counts per column', () => {
  const c = gsqlCatalog();
  expect(c.tables.map((t) => t.name)).toEqual(['Orders', 'Lines']);
  const orders = findTable(c, 'orders');
  expect(orders?.columns.map((x) => [x.name, x.indexes])).toEqual([
    ['Id', 0],
    ['Note', 1],
    ['Total', 2],
    ['Raw', 0],
    ['Upper', 0],
    ['Vec', 0],
  ]);
  expect(orders?.indexes).toBe(2);
  expect(orders?.columns.find((x) => x.name === 'Vec')?.type).toBeUndefined();
  expect(orders?.columns.find((x) => x.name === 'Upper')?.generated).toBe(true);
  expect(findTable(c, 'Lines')?.primaryKey).toEqual(['OrderId', 'At']);
  const pg = parseWriterCatalog(
    'POSTGRESQL',
    [{ table_name: 'orders' }],
    [
      {
        table_name: 'orders',
        column_name: 'id',
        ordinal_position: 1,
        spanner_type: 'bigint',
        is_nullable: 'NO',
        is_generated: 'NEVER',
      },
    ],
    [{ table_name: 'orders', index_name: 'PRIMARY_KEY', column_name: 'id', ordinal_position: 1 }],
  );
  expect(findTable(pg, 'orders')?.primaryKey).toEqual(['id']);
  expect(findTable(pg, 'Orders')).toBeUndefined();
});

test('typed mutations: canonical names, typed values, index-aware cells, bytes and row identity', () => {
  const r = typeMutations(gsqlCatalog(), [
    { index: 0, op: 'insert', table: 'orders', row: { id: 7, note: 'hé', total: '1.50', raw: 'AAAA' } },
    { index: 1, op: 'delete', table: 'Orders', key: ['7'] },
    {
      index: 2,
      op: 'update',
      table: 'Lines',
      row: { OrderId: '7', At: '2024-01-01T00:00:00+02:00', Qty: 1 },
    },
  ]);
  if (!r.ok) throw new Error(r.problems.join('\n'));
  const [ins, del, upd] = r.value;
  expect(ins).toMatchObject({
    table: 'Orders',
    columns: ['Id', 'Note', 'Total', 'Raw'],
    values: ['7', 'hé', '1.5', 'AAAA'],
    rowKey: 'Orders ["7"]',
  });
  // Id 1, Note 1 + 1 index, Total 1 + 2 indexes, Raw 1.
  expect(ins?.cells).toBe(7);
  expect(ins?.bytes).toBe('Orders'.length + 'IdNoteTotalRaw'.length + 1 + 3 + 3 + 4);
  expect(del).toMatchObject({
    op: 'delete',
    columns: ['Id'],
    values: ['7'],
    rowKey: 'Orders ["7"]',
    cells: 3,
  });
  expect(upd).toMatchObject({
    rowKey: 'Lines ["7","2023-12-31T22:00:00.000000000Z"]',
    values: ['7', '2023-12-31T22:00:00.000000000Z', 1],
  });
});

test('every problem of every mutation, and whether a table or column was not found', () => {
  const ms: MutationInput[] = [
    { index: 0, op: 'insert', table: 'Nope', row: { Id: 1 } },
    { index: 1, op: 'insert', table: 'Orders', row: { Id: 'x', Ghost: 1, Upper: 'a', Vec: 'b' } },
    { index: 2, op: 'insertOrUpdate', table: 'Lines', row: { Qty: 1 } },
    { index: 3, op: 'delete', table: 'Lines', key: ['1'] },
    { index: 4, op: 'delete', table: 'Lines', key: ['1', 'yesterday'] },
    { index: 5, op: 'replace', table: 'Orders', row: { Id: 1, id: 2 } },
  ];
  const r = typeMutations(gsqlCatalog(), ms);
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect(r.schemaMiss).toBe(true);
  expect(r.problems.map(plain)).toEqual([
    'mutations[0].table: no table "Nope" in the database',
    'mutations[1].row.Id: expected INT64 (a decimal string, or a number within ±2^53), got a string "x"',
    'mutations[1].row.Ghost: no column "Ghost" in table Orders',
    'mutations[1].row.Upper: is a generated column (Spanner computes it)',
    'mutations[1].row.Vec: columns of type TOKENLIST cannot be written by the writer',
    'mutations[2].row: lacks primary-key column(s) OrderId, At',
    'mutations[3].key: table Lines has a key of 2 column(s) (OrderId, At), got 1 value(s)',
    expect.stringMatching(/^mutations\[4\]\.key\[1\]: expected TIMESTAMP/),
    'mutations[5].row.id: column Id is named twice',
  ]);
  const typesOnly = typeMutations(gsqlCatalog(), [ms[2] as MutationInput]);
  expect(typesOnly.ok === false && typesOnly.schemaMiss).toBe(false);
});

test('the catalog keeps a named-schema table apart from a default-schema table of the same base name', () => {
  const row = (schema: string, name: string) => ({ table_schema: schema, table_name: name });
  const column = (schema: string, name: string, c: string) => ({
    ...row(schema, name),
    column_name: c,
    ordinal_position: 1,
    spanner_type: 'bigint',
    is_nullable: 'NO',
    is_generated: 'NEVER',
  });
  const key = (schema: string, name: string, c: string) => ({
    ...row(schema, name),
    index_name: 'PRIMARY_KEY',
    column_name: c,
    ordinal_position: 1,
  });
  const c = parseWriterCatalog(
    'POSTGRESQL',
    [row('public', 'orders'), row('sales', 'orders')],
    [column('public', 'orders', 'id'), column('sales', 'orders', 'order_id')],
    [key('public', 'orders', 'id'), key('sales', 'orders', 'order_id')],
  );
  expect(c.tables.map((t) => [t.name, t.primaryKey])).toEqual([
    ['orders', ['id']],
    ['sales.orders', ['order_id']],
  ]);
  expect(findTable(c, 'sales.orders')?.columns.map((x) => x.name)).toEqual(['order_id']);
});

test('a BYTES key is one row however its base64 is spelled: QQ== and QR== both decode to the byte 0x41', () => {
  const catalog = parseWriterCatalog(
    'GOOGLE_STANDARD_SQL',
    [{ TABLE_NAME: 'Blobs' }],
    [gsqlColumn('Blobs', 'K', 1, 'BYTES(16)', 'NO')],
    [{ TABLE_NAME: 'Blobs', INDEX_NAME: 'PRIMARY_KEY', COLUMN_NAME: 'K', ORDINAL_POSITION: 1 }],
  );
  const typed = typeMutations(catalog, [
    { index: 0, op: 'insertOrUpdate', table: 'Blobs', row: { K: 'QQ==' } },
    { index: 1, op: 'delete', table: 'Blobs', key: ['QR=='] },
  ] as MutationInput[]);
  if (!typed.ok) throw new Error(typed.problems.join('; '));
  const [a, b] = typed.value;
  expect(b?.rowKey).toBe(a?.rowKey);
  expect(b?.values).toEqual(['QQ==']);
});
