import {
  ConfigError,
  configSchema,
  parseConfig,
  parseConfigObject,
  unknownVariables,
} from '../../../shared/domain/config';
import { parseTimestamp } from '../../../shared/domain/timestamp';
import { PIPELINE_ENV } from './support/pipeline-env';

const ENV = {
  ...PIPELINE_ENV,
  SLUICE_TABLES: '{"Orders":{"replica":"orders","history":"orders_history"},"Items":{"history":"items_h"}}',
};

function issuesOf(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).kind).toBe('invalid-input');
    return (err as ConfigError).issues;
  }
  throw new Error('expected a ConfigError');
}

/** The issues of parseConfig with ENV changed by `changes`. */
const issuesWith = (changes: Record<string, string>) => issuesOf(() => parseConfig({ ...ENV, ...changes }));

describe('parseConfig', () => {
  it('builds the configuration from the environment with safe defaults', () => {
    expect(parseConfig(ENV)).toEqual({
      pipeline: 'sluice',
      project: 'my-project',
      spanner: { instance: 'prod-1', database: 'shop', stream: 'ShopChanges' },
      bigquery: { dataset: 'shop_cdc' },
      ledger: { bucket: 'my-project-sluice' },
      tables: { Orders: { replica: 'orders', history: 'orders_history' }, Items: { history: 'items_h' } },
      mode: 'scheduled',
      window: { maxMs: 600_000, longPollMs: 120_000 },
      flush: { intervalMs: 1_000, checkpointMs: 5_000 },
      history: { streamMaxAgeMs: 86_400_000, streamMaxRows: 100_000_000 },
      heartbeatMs: 10_000,
      leaseMs: 2_100_000,
      startAt: { kind: 'latest' },
      retentionFallback: 'fail',
      allTables: null,
      excludedTables: [],
      acceptStreamOptions: [],
      onBadRecord: 'fail',
      logValues: 'none',
    });
  });

  it('reads the all-tables form, exclusions and accepted stream options', () => {
    const config = parseConfig({
      ...ENV,
      SLUICE_TABLES:
        '{"*":{"replica":true,"history":"{table}_cdc"},"Orders":{"replica":"orders_v2"},"Audit":false}',
      SLUICE_ACCEPT_STREAM_OPTIONS: 'exclude_ttl_deletes, allow_txn_exclusion',
    });
    expect(config.tables).toEqual({ Orders: { replica: 'orders_v2' } });
    expect(config.allTables).toEqual({ replica: '{table}', history: '{table}_cdc' });
    expect(config.excludedTables).toEqual(['Audit']);
    expect(config.acceptStreamOptions).toEqual(['exclude_ttl_deletes', 'allow_txn_exclusion']);
    expect(issuesWith({ SLUICE_TABLES: '{"*":{"replica":"fixed"}}' })).toEqual([
      {
        path: 'tables.*.replica',
        variable: 'SLUICE_TABLES',
        rule: 'must be true (the default naming rule) or a BigQuery table name containing {table}, e.g. {table}_cdc',
      },
    ]);
    expect(issuesWith({ SLUICE_ACCEPT_STREAM_OPTIONS: 'exclude_everything' })).toEqual([
      {
        path: 'acceptStreamOptions[0]',
        variable: 'SLUICE_ACCEPT_STREAM_OPTIONS',
        rule: 'must list only exclude_insert, exclude_update, exclude_delete, exclude_ttl_deletes, allow_txn_exclusion',
      },
    ]);
    expect(issuesWith({ SLUICE_TABLES: '{"Audit":false}' })).toEqual([
      { path: 'tables', variable: 'SLUICE_TABLES', rule: 'must watch at least one table' },
    ]);
  });

  it('accepts tables of named schemas as schema.table and names a malformed one', () => {
    const config = parseConfig({
      ...ENV,
      SLUICE_TABLES: '{"sales.Orders":{"replica":"sales_orders"},"*":{"replica":true},"audit.Log":false}',
    });
    expect(config.tables).toEqual({ 'sales.Orders': { replica: 'sales_orders' } });
    expect(config.excludedTables).toEqual(['audit.Log']);
    const rule = 'table name must be an identifier, or schema.table for a table in a named schema';
    for (const bad of ['a.b.c', 'sales.', '.Orders', 'sales-eu.Orders', 'sales.Order Lines']) {
      expect(issuesWith({ SLUICE_TABLES: JSON.stringify({ [bad]: { replica: 'x' } }) })).toEqual([
        { path: `tables.${bad}`, variable: 'SLUICE_TABLES', rule },
      ]);
    }
  });

  it('reads every optional variable', () => {
    const config = parseConfig({
      ...ENV,
      SLUICE_PIPELINE: 'shop-eu',
      SLUICE_MODE: 'continuous',
      SLUICE_WINDOW_MAX_MS: '300000',
      SLUICE_WINDOW_LONG_POLL_MS: '60000',
      SLUICE_FLUSH_INTERVAL_MS: '500',
      SLUICE_CHECKPOINT_INTERVAL_MS: '2000',
      SLUICE_HEARTBEAT_MS: ' 1000 ',
      SLUICE_LEASE_MS: '600000',
      SLUICE_START_AT: '2024-05-01T10:00:00.123456789+02:00',
      SLUICE_RETENTION_FALLBACK: 'restart-and-backfill',
      SLUICE_HISTORY_STREAM_MAX_AGE_MS: '3600000',
      SLUICE_HISTORY_STREAM_MAX_ROWS: '5000',
      SLUICE_UNRELATED: '',
    });
    expect(config).toMatchObject({
      pipeline: 'shop-eu',
      mode: 'continuous',
      window: { maxMs: 300_000, longPollMs: 60_000 },
      flush: { intervalMs: 500, checkpointMs: 2_000 },
      heartbeatMs: 1_000,
      leaseMs: 600_000,
      startAt: { kind: 'timestamp', at: parseTimestamp('2024-05-01T08:00:00.123456789Z') },
      retentionFallback: 'restart-and-backfill',
      history: { streamMaxAgeMs: 3_600_000, streamMaxRows: 5_000 },
    });
    expect(parseConfig({ ...ENV, SLUICE_START_AT: 'snapshot' }).startAt).toEqual({ kind: 'snapshot' });
    expect(issuesWith({ SLUICE_HISTORY_STREAM_MAX_ROWS: '12.5' }).map((i) => i.variable)).toEqual([
      'SLUICE_HISTORY_STREAM_MAX_ROWS',
    ]);
  });

  it('lists every bad variable in one error, with its path, variable and rule', () => {
    const issues = issuesWith({
      SLUICE_PROJECT: 'X',
      SLUICE_SPANNER_STREAM: 'drop table; --',
      SLUICE_MODE: 'sometimes',
      SLUICE_HEARTBEAT_MS: '500',
      SLUICE_WINDOW_MAX_MS: 'ten minutes',
      SLUICE_START_AT: 'yesterday',
      SLUICE_RETENTION_FALLBACK: 'ignore',
      SLUICE_TABLES: '{"Orders":{},"bad name":{"replica":"x"},"Items":{"replica":"no-dashes"}}',
    });
    expect(issues.map((i) => `${i.path}|${i.variable}`).sort()).toEqual(
      [
        'project|SLUICE_PROJECT',
        'spanner.stream|SLUICE_SPANNER_STREAM',
        'mode|SLUICE_MODE',
        'heartbeatMs|SLUICE_HEARTBEAT_MS',
        'window.maxMs|SLUICE_WINDOW_MAX_MS',
        'startAt|SLUICE_START_AT',
        'retentionFallback|SLUICE_RETENTION_FALLBACK',
        'tables.Orders|SLUICE_TABLES',
        'tables.bad name|SLUICE_TABLES',
        'tables.Items.replica|SLUICE_TABLES',
      ].sort(),
    );
    const heartbeat = issues.find((i) => i.path === 'heartbeatMs')!;
    expect(heartbeat.rule).toBe('must be a whole number of milliseconds from 1000 to 300000');
  });

  it('names missing required variables and unreadable JSON', () => {
    const issues = issuesOf(() => parseConfig({ SLUICE_TABLES: '{not json' }));
    expect(issues[0]).toMatchObject({ path: 'tables', variable: 'SLUICE_TABLES' });
    expect(issues[0]!.rule).toMatch(/^must be JSON/);
    expect(issues.filter((i) => i.rule === 'is required').map((i) => i.variable)).toEqual([
      'SLUICE_PROJECT',
      'SLUICE_SPANNER_INSTANCE',
      'SLUICE_SPANNER_DATABASE',
      'SLUICE_SPANNER_STREAM',
      'SLUICE_BIGQUERY_DATASET',
      'SLUICE_LEDGER_BUCKET',
    ]);
    const err = (() => {
      try {
        parseConfig({ ...ENV, SLUICE_TABLES: '[]' });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err?.message).toContain('tables (SLUICE_TABLES): must be a JSON object of table name to targets');
    expect(issuesWith({ SLUICE_TABLES: '{}' })).toEqual([
      { path: 'tables', variable: 'SLUICE_TABLES', rule: 'must watch at least one table' },
    ]);
    expect(issuesWith({ SLUICE_TABLES: '{bad' }).map((i) => i.path)).toEqual(['tables']);
  });

  it('checks rules across fields', () => {
    const issues = issuesWith({
      SLUICE_WINDOW_MAX_MS: '60000',
      SLUICE_WINDOW_LONG_POLL_MS: '120000',
      SLUICE_LEASE_MS: '30000',
    });
    expect(issues).toEqual([
      {
        path: 'window.longPollMs',
        variable: 'SLUICE_WINDOW_LONG_POLL_MS',
        rule: 'must not exceed window.maxMs (60000 ms)',
      },
      {
        path: 'leaseMs',
        variable: 'SLUICE_LEASE_MS',
        rule: 'must be at least window.maxMs (60000 ms): a lease must outlive its window',
      },
    ]);
  });
});

describe('parseConfigObject (Pulumi stack configuration)', () => {
  it('accepts numbers as well as strings, and reports paths without variables', () => {
    const input = {
      project: 'my-project',
      spanner: { instance: 'prod-1', database: 'shop', stream: 'ShopChanges' },
      bigquery: { dataset: 'shop_cdc' },
      ledger: { bucket: 'my-project-sluice' },
      tables: { Orders: { replica: 'orders' } },
      heartbeatMs: 2000,
    };
    expect(parseConfigObject(input).heartbeatMs).toBe(2000);
    expect(configSchema.safeParse(input).success).toBe(true);
    expect(issuesOf(() => parseConfigObject({ ...input, heartbeatMs: 2.5, extra: 1 }))).toEqual([
      { path: 'heartbeatMs', rule: 'must be a whole number of milliseconds from 1000 to 300000' },
      { path: '(root)', rule: 'Unrecognized key: "extra"' },
    ]);
  });
});

describe('unknownVariables', () => {
  it('lists SLUICE_ variables that configure nothing (typos)', () => {
    expect(
      unknownVariables({ ...ENV, SLUICE_HEARTBEAT: '1000', PATH: '/bin', SLUICE_READER_URL: 'x' }, [
        'SLUICE_READER_URL',
      ]),
    ).toEqual(['SLUICE_HEARTBEAT']);
  });
});

describe('ConfigError', () => {
  it('puts one issue per line in the message', () => {
    const err = new ConfigError([
      { path: 'mode', variable: 'SLUICE_MODE', rule: 'must be scheduled or continuous' },
      { path: 'tables', rule: 'must watch at least one table' },
    ]);
    expect(err.message).toBe(
      'invalid configuration:\n  - mode (SLUICE_MODE): must be scheduled or continuous\n  - tables: must watch at least one table',
    );
  });
});
