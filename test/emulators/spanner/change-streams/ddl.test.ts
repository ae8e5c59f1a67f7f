import { createChangeStreamEngine } from '../../../../local/emulators/spanner/change-streams/engine';
import { Code, SpannerError } from '../../../../local/emulators/spanner/hooks';
import { fakeSchema } from './fixtures';

const gsql = fakeSchema();
const pg = fakeSchema('POSTGRESQL');

/** Applies the statements in order, each as schema version `version`. */
function applyEach(
  e: ReturnType<typeof createChangeStreamEngine>,
  schema: typeof gsql,
  version: bigint,
  statements: string[],
): void {
  for (const statement of statements) e.applyDdl(statement, schema, version);
}

function codeOf(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (e) {
    return e instanceof SpannerError ? e.code : -1;
  }
  return undefined;
}

describe('change-stream DDL and INFORMATION_SCHEMA', () => {
  it('GoogleSQL: CREATE / ALTER / DROP, reflected in the views and the DDL', () => {
    const e = createChangeStreamEngine();
    expect(e.applyDdl('CREATE TABLE T (x INT64) PRIMARY KEY (x)', gsql, 1n)).toBe(false);
    expect(
      e.applyDdl(
        "CREATE CHANGE STREAM All_ FOR ALL OPTIONS (retention_period = '36h', value_capture_type = 'NEW_ROW')",
        gsql,
        1n,
      ),
    ).toBe(true);
    e.applyDdl('CREATE CHANGE STREAM Cols FOR Singers(Name, Score), `Albums`', gsql, 1n);
    e.applyDdl('CREATE CHANGE STREAM KeysOnly FOR Singers() OPTIONS (exclude_delete = true)', gsql, 1n);
    expect(e.informationSchema('INFORMATION_SCHEMA.CHANGE_STREAMS')).toEqual([
      { CHANGE_STREAM_CATALOG: '', CHANGE_STREAM_SCHEMA: '', CHANGE_STREAM_NAME: 'All_', ALL: true },
      { CHANGE_STREAM_CATALOG: '', CHANGE_STREAM_SCHEMA: '', CHANGE_STREAM_NAME: 'Cols', ALL: false },
      { CHANGE_STREAM_CATALOG: '', CHANGE_STREAM_SCHEMA: '', CHANGE_STREAM_NAME: 'KeysOnly', ALL: false },
    ]);
    expect(
      e
        .informationSchema('CHANGE_STREAM_TABLES')
        ?.map((r) => [r.CHANGE_STREAM_NAME, r.TABLE_NAME, r.ALL_COLUMNS]),
    ).toEqual([
      ['Cols', 'Singers', false],
      ['Cols', 'Albums', true],
      ['KeysOnly', 'Singers', false],
    ]);
    expect(e.informationSchema('CHANGE_STREAM_COLUMNS')?.map((r) => r.COLUMN_NAME)).toEqual([
      'Name',
      'Score',
    ]);
    expect(
      e
        .informationSchema('CHANGE_STREAM_OPTIONS')
        ?.map((r) => [r.CHANGE_STREAM_NAME, r.OPTION_NAME, r.OPTION_TYPE, r.OPTION_VALUE]),
    ).toEqual([
      ['All_', 'retention_period', 'STRING', '36h'],
      ['All_', 'value_capture_type', 'STRING', 'NEW_ROW'],
      ['KeysOnly', 'exclude_delete', 'BOOL', 'true'],
    ]);
    applyEach(e, gsql, 2n, [
      'ALTER CHANGE STREAM Cols SET FOR ALL',
      "ALTER CHANGE STREAM All_ SET OPTIONS (value_capture_type = 'NEW_VALUES', retention_period = NULL)",
      'ALTER CHANGE STREAM KeysOnly DROP FOR ALL',
      'DROP CHANGE STREAM Cols',
    ]);
    expect(e.ddlStatements()).toEqual([
      "CREATE CHANGE STREAM All_ FOR ALL OPTIONS (value_capture_type = 'NEW_VALUES')",
      'CREATE CHANGE STREAM KeysOnly OPTIONS (exclude_delete = true)',
    ]);
    expect(e.informationSchema('TABLES')).toBeUndefined();
  });

  it('PostgreSQL: WITH, SET, RESET, lower-case view columns', () => {
    const e = createChangeStreamEngine({ dialect: 'POSTGRESQL' });
    applyEach(e, pg, 1n, [
      "CREATE CHANGE STREAM s FOR Singers(Name) WITH (value_capture_type = 'NEW_ROW_AND_OLD_VALUES', exclude_ttl_deletes = true)",
      "ALTER CHANGE STREAM s SET (retention_period = '2d')",
      'ALTER CHANGE STREAM s RESET (exclude_ttl_deletes)',
    ]);
    expect(e.informationSchema('information_schema.change_stream_options')).toEqual([
      expect.objectContaining({
        change_stream_name: 's',
        option_name: 'value_capture_type',
        option_type: 'character varying',
        option_value: 'NEW_ROW_AND_OLD_VALUES',
      }),
      expect.objectContaining({ option_name: 'retention_period', option_value: '2d' }),
    ]);
    expect(e.informationSchema('change_stream_columns')?.[0]).toMatchObject({
      table_schema: 'public',
      column_name: 'Name',
    });
    expect(e.ddlStatements()).toEqual([
      "CREATE CHANGE STREAM s FOR Singers(Name) WITH (value_capture_type = 'NEW_ROW_AND_OLD_VALUES', retention_period = '2d')",
    ]);
  });

  it('rejects invalid statements with the service codes', () => {
    const e = createChangeStreamEngine();
    e.applyDdl('CREATE CHANGE STREAM S FOR ALL', gsql, 1n);
    const bad: Array<[string, number]> = [
      ['CREATE CHANGE STREAM S FOR ALL', Code.FAILED_PRECONDITION],
      ['CREATE CHANGE STREAM X FOR Nope', Code.FAILED_PRECONDITION],
      ['CREATE CHANGE STREAM X FOR Singers(Nope)', Code.FAILED_PRECONDITION],
      ['CREATE CHANGE STREAM X FOR Singers(SingerId)', Code.FAILED_PRECONDITION],
      ['CREATE CHANGE STREAM X FOR Singers, Singers', Code.FAILED_PRECONDITION],
      ['CREATE CHANGE STREAM X FOR Singers(Name, Name)', Code.FAILED_PRECONDITION],
      ["CREATE CHANGE STREAM X OPTIONS (retention_period = '1h')", Code.FAILED_PRECONDITION],
      ["CREATE CHANGE STREAM X OPTIONS (retention_period = 'soon')", Code.FAILED_PRECONDITION],
      ["CREATE CHANGE STREAM X OPTIONS (value_capture_type = 'EVERYTHING')", Code.FAILED_PRECONDITION],
      ["CREATE CHANGE STREAM X OPTIONS (exclude_insert = 'yes')", Code.FAILED_PRECONDITION],
      ['CREATE CHANGE STREAM X OPTIONS (colour = true)', Code.INVALID_ARGUMENT],
      ['CREATE CHANGE STREAM X FOR ALL garbage', Code.INVALID_ARGUMENT],
      ['ALTER CHANGE STREAM Nope SET FOR ALL', Code.NOT_FOUND],
      ['DROP CHANGE STREAM Nope', Code.NOT_FOUND],
    ];
    for (const [sql, code] of bad)
      expect([sql, codeOf(() => e.applyDdl(sql, gsql, 1n))]).toEqual([sql, code]);
    e.applyDdl('CREATE CHANGE STREAM N', gsql, 1n);
    expect(codeOf(() => e.applyDdl('ALTER CHANGE STREAM N DROP FOR ALL', gsql, 1n))).toBe(
      Code.FAILED_PRECONDITION,
    );
    const lax = createChangeStreamEngine({ retentionCheck: false });
    expect(lax.applyDdl("CREATE CHANGE STREAM R FOR ALL OPTIONS (retention_period = '5s')", gsql, 1n)).toBe(
      true,
    );
  });
});
