import {
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
  primaryKeyQuery,
  tableColumnsQuery,
} from '../../../shared/domain/information-schema';

const builders = [
  changeStreamQueryOf,
  changeStreamTablesQuery,
  changeStreamColumnsQuery,
  changeStreamOptionsQuery,
  tableColumnsQuery,
  primaryKeyQuery,
];

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

  it('quotes the reserved ALL column and scopes tables to the default schema', () => {
    expect(changeStreamQueryOf('GOOGLE_STANDARD_SQL', 's').sql).toContain('`ALL`');
    expect(changeStreamQueryOf('POSTGRESQL', 's').sql).toContain('"all"');
    expect(tableColumnsQuery('GOOGLE_STANDARD_SQL', 't').sql).toContain("TABLE_SCHEMA = ''");
    expect(tableColumnsQuery('POSTGRESQL', 't').sql).toContain("table_schema = 'public'");
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
