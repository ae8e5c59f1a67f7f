import {
  allColumnsQuery,
  allPrimaryKeysQuery,
  changeStreamColumnsQuery,
  changeStreamOptionsQuery,
  changeStreamQueryOf,
  changeStreamTablesQuery,
  DATABASE_DIALECT_QUERY,
  DEFAULT_RETENTION_SECONDS,
  parseChangeStreamOptions,
  parseChangeStreamScope,
  parseDatabaseDialect,
  parseRetentionPeriod,
  parseTableSchema,
  parseTableSchemas,
  primaryKeyQuery,
  qualifiedTableName,
  splitTableName,
  tableColumnsQuery,
} from '../../../shared/domain/information-schema';

const builders = [
  changeStreamQueryOf,
  changeStreamTablesQuery,
  changeStreamColumnsQuery,
  changeStreamOptionsQuery,
];
const tableBuilders = [tableColumnsQuery, primaryKeyQuery];

describe('INFORMATION_SCHEMA query text', () => {
  it.each(builders.map((b) => [b.name, b]))(
    '%s binds the name as a parameter in both dialects',
    (_n, build) => {
      const g = build('GOOGLE_STANDARD_SQL', "x' OR '1'='1");
      expect(g.sql).toMatch(/INFORMATION_SCHEMA\.\w+ WHERE .*= @name/);
      expect(g.sql).not.toContain("x'");
      expect(g.params).toEqual({ name: "x' OR '1'='1" });
      expect(g.types).toEqual({ name: 'string' });
      const p = build('POSTGRESQL', 'orders');
      expect(p.sql).toMatch(/information_schema\.\w+ WHERE .*= \$1/);
      expect(p.sql).not.toMatch(/[A-Z]{4,}_NAME/);
      expect(p.params).toEqual({ p1: 'orders' });
    },
  );

  it.each(tableBuilders.map((b) => [b.name, b]))(
    '%s binds the schema and the name in the schema as parameters in both dialects',
    (_n, build) => {
      const g = build('GOOGLE_STANDARD_SQL', "x' OR '1'='1");
      expect(g.sql).toMatch(/TABLE_SCHEMA = @schema AND TABLE_NAME = @name/);
      expect(g.sql).not.toContain("x'");
      expect(g.params).toEqual({ schema: '', name: "x' OR '1'='1" });
      expect(g.types).toEqual({ schema: 'string', name: 'string' });
      expect(build('GOOGLE_STANDARD_SQL', 'sales.Orders').params).toEqual({
        schema: 'sales',
        name: 'Orders',
      });
      const p = build('POSTGRESQL', 'orders');
      expect(p.sql).toMatch(/table_schema = \$1 AND table_name = \$2/);
      expect(p.sql).not.toMatch(/[A-Z]{4,}_NAME/);
      expect(p.params).toEqual({ p1: 'public', p2: 'orders' });
      expect(build('POSTGRESQL', 'sales.orders').params).toEqual({ p1: 'sales', p2: 'orders' });
    },
  );

  it('quotes the reserved ALL column and reads every user schema, not the system ones', () => {
    expect(changeStreamQueryOf('GOOGLE_STANDARD_SQL', 's').sql).toContain('`ALL`');
    expect(changeStreamQueryOf('POSTGRESQL', 's').sql).toContain('"all"');
    expect(allColumnsQuery('GOOGLE_STANDARD_SQL').sql).toContain(
      "TABLE_SCHEMA NOT IN ('INFORMATION_SCHEMA', 'SPANNER_SYS')",
    );
    expect(allPrimaryKeysQuery('POSTGRESQL').sql).toContain(
      "table_schema NOT IN ('information_schema', 'spanner_sys', 'pg_catalog')",
    );
    expect(primaryKeyQuery('POSTGRESQL', 't').sql).toContain("index_name = 'PRIMARY_KEY'");
    expect(DATABASE_DIALECT_QUERY.sql).toContain("option_name = 'database_dialect'");
  });
});

describe('parsing INFORMATION_SCHEMA results', () => {
  it('reads the dialect in either row shape', () => {
    expect(parseDatabaseDialect([{ OPTION_VALUE: 'POSTGRESQL' }])).toBe('POSTGRESQL');
    expect(parseDatabaseDialect([[{ name: 'option_value', value: 'GOOGLE_STANDARD_SQL' }]])).toBe(
      'GOOGLE_STANDARD_SQL',
    );
    expect(parseDatabaseDialect([])).toBe('GOOGLE_STANDARD_SQL');
    expect(() => parseDatabaseDialect([{ option_value: 'MYSQL' }])).toThrow(/unknown database dialect MYSQL/);
  });

  it('combines stream, tables and columns into a scope', () => {
    expect(parseChangeStreamScope([], [], [])).toBeUndefined();
    const scope = parseChangeStreamScope(
      [{ CHANGE_STREAM_NAME: 's', ALL: false }],
      [
        { TABLE_NAME: 'Orders', ALL_COLUMNS: true },
        { TABLE_NAME: 'Users', ALL_COLUMNS: false },
      ],
      [
        { TABLE_NAME: 'Users', COLUMN_NAME: 'Email' },
        { TABLE_NAME: 'Users', COLUMN_NAME: 'Name' },
        { TABLE_NAME: 'Orders', COLUMN_NAME: 'Ignored' },
        { TABLE_NAME: 'Extra', COLUMN_NAME: 'C' },
      ],
    );
    expect(scope?.all).toBe(false);
    expect(Object.fromEntries(scope!.tables)).toEqual({
      Orders: { columns: 'all' },
      Users: { columns: ['Email', 'Name'] },
      Extra: { columns: ['C'] },
    });
    expect(parseChangeStreamScope([{ change_stream_name: 's', all: true }], [], [])).toEqual({
      all: true,
      tables: new Map(),
    });
  });

  it('reads PostgreSQL YES / NO flags', () => {
    const scope = parseChangeStreamScope(
      [{ change_stream_name: 's', all: 'NO' }],
      [{ table_name: 'orders', all_columns: 'YES' }],
      [],
    );
    expect(scope?.all).toBe(false);
    expect(Object.fromEntries(scope!.tables)).toEqual({ orders: { columns: 'all' } });
    expect(parseChangeStreamScope([{ change_stream_name: 's', all: 'YES' }], [], [])?.all).toBe(true);
  });

  it('fills in defaults for options the emulator does not list', () => {
    expect(parseChangeStreamOptions([])).toEqual({
      valueCaptureType: 'OLD_AND_NEW_VALUES',
      retentionSeconds: DEFAULT_RETENTION_SECONDS,
      partitionMode: 'IMMUTABLE_KEY_RANGE',
      raw: {},
    });
    const options = parseChangeStreamOptions([
      { OPTION_NAME: 'value_capture_type', OPTION_VALUE: 'NEW_ROW' },
      { OPTION_NAME: 'retention_period', OPTION_VALUE: '7d' },
      { option_name: 'partition_mode', option_value: 'MUTABLE_KEY_RANGE' },
      { option_name: 'exclude_ttl_deletes', option_value: null },
    ]);
    expect(options).toMatchObject({
      valueCaptureType: 'NEW_ROW',
      retentionSeconds: 7 * 86_400,
      partitionMode: 'MUTABLE_KEY_RANGE',
    });
    expect(options.raw['exclude_ttl_deletes']).toBe('');
    expect(() =>
      parseChangeStreamOptions([{ option_name: 'value_capture_type', option_value: 'X' }]),
    ).toThrow(/unknown value_capture_type "X"/);
    expect(() => parseChangeStreamOptions([{ option_name: 'partition_mode', option_value: 'Y' }])).toThrow(
      /unknown partition_mode "Y"/,
    );
  });

  it.each([
    ['86400s', 86_400],
    ['1440m', 86_400],
    ['36h', 129_600],
    ['30d', 2_592_000],
  ])('parses retention %s', (text, seconds) => {
    expect(parseRetentionPeriod(text)).toBe(seconds);
  });

  it('rejects a malformed retention', () => {
    expect(() => parseRetentionPeriod('1 week')).toThrow(/invalid retention_period/);
  });

  it('reads table columns and primary key in order for both dialects', () => {
    const g = parseTableSchema(
      'Orders',
      'GOOGLE_STANDARD_SQL',
      [
        { COLUMN_NAME: 'Amount', ORDINAL_POSITION: 3, SPANNER_TYPE: 'NUMERIC', IS_NULLABLE: 'YES' },
        { COLUMN_NAME: 'OrderId', ORDINAL_POSITION: 1, SPANNER_TYPE: 'INT64', IS_NULLABLE: 'NO' },
        { COLUMN_NAME: 'Region', ORDINAL_POSITION: 2, SPANNER_TYPE: 'STRING(16)', IS_NULLABLE: 'NO' },
      ],
      [
        { COLUMN_NAME: 'Region', ORDINAL_POSITION: '2' },
        { COLUMN_NAME: 'OrderId', ORDINAL_POSITION: '1' },
      ],
    );
    expect(g.primaryKey).toEqual(['OrderId', 'Region']);
    expect(g.columns.map((c) => [c.name, c.type.code, c.nullable])).toEqual([
      ['OrderId', 'INT64', false],
      ['Region', 'STRING', false],
      ['Amount', 'NUMERIC', true],
    ]);
    const p = parseTableSchema(
      'orders',
      'POSTGRESQL',
      [{ column_name: 'amount', ordinal_position: 1, spanner_type: 'numeric', is_nullable: 'YES' }],
      [],
    );
    expect(p.columns[0]!.type).toEqual({ code: 'NUMERIC', typeAnnotation: 'PG_NUMERIC' });
    expect(() => parseTableSchema('gone', 'POSTGRESQL', [], [])).toThrow(/table gone not found/);
  });
});

describe('tables in named schemas', () => {
  it('names a table T in the default schema and sch.T in a named one, in both dialects', () => {
    expect(splitTableName('GOOGLE_STANDARD_SQL', 'Orders')).toEqual({ schema: '', name: 'Orders' });
    expect(splitTableName('GOOGLE_STANDARD_SQL', 'sales.Orders')).toEqual({
      schema: 'sales',
      name: 'Orders',
    });
    expect(splitTableName('POSTGRESQL', 'orders')).toEqual({ schema: 'public', name: 'orders' });
    expect(qualifiedTableName('POSTGRESQL', 'public', 'orders')).toBe('orders');
    expect(qualifiedTableName('POSTGRESQL', 'sales', 'orders')).toBe('sales.orders');
    expect(qualifiedTableName('GOOGLE_STANDARD_SQL', '', 'Orders')).toBe('Orders');
  });

  it('keeps a named-schema table apart from a default-schema table of the same name', () => {
    const col = (schema: string, name: string, column: string, pos: number) => ({
      TABLE_SCHEMA: schema,
      TABLE_NAME: name,
      COLUMN_NAME: column,
      ORDINAL_POSITION: pos,
      SPANNER_TYPE: 'INT64',
      IS_NULLABLE: 'NO',
      IS_GENERATED: 'NEVER',
      IS_STORED: null,
      IS_HIDDEN: false,
    });
    const key = (schema: string, name: string) => ({
      TABLE_SCHEMA: schema,
      TABLE_NAME: name,
      COLUMN_NAME: 'Id',
      ORDINAL_POSITION: 1,
    });
    const schemas = parseTableSchemas(
      'GOOGLE_STANDARD_SQL',
      [col('', 'Orders', 'Id', 1), col('sales', 'Orders', 'Id', 1), col('sales', 'Orders', 'Amount', 2)],
      [key('', 'Orders'), key('sales', 'Orders')],
    );
    expect(schemas.map((s) => [s.name, s.columns.map((c) => c.name), s.primaryKey])).toEqual([
      ['Orders', ['Id'], ['Id']],
      ['sales.Orders', ['Id', 'Amount'], ['Id']],
    ]);
  });

  it('reads a stream scope with named-schema tables (PostgreSQL public is the default schema)', () => {
    const scope = parseChangeStreamScope(
      [{ change_stream_name: 's', all: 'NO' }],
      [
        { table_schema: 'public', table_name: 'orders', all_columns: 'YES' },
        { table_schema: 'sales', table_name: 'orders', all_columns: 'NO' },
      ],
      [{ table_schema: 'sales', table_name: 'orders', column_name: 'amount' }],
    );
    expect(scope?.tables).toEqual(
      new Map([
        ['orders', { columns: 'all' }],
        ['sales.orders', { columns: ['amount'] }],
      ]),
    );
  });
});
