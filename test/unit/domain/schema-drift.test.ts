/** Replica plans and drift detection: which columns are replicated, and what a record or a read reveals. */
import type { DataChangeRecord, SpannerType } from '../../../shared/domain/change-record';
import {
  parseTableSchema,
  type TableColumn,
  type TableSchema,
} from '../../../shared/domain/information-schema';
import { columnDrift, firstDrift, planReplica, sameType } from '../../../shared/domain/replica-plan';
import { fromNanos } from '../../../shared/domain/timestamp';
import { columnTypesOf, soleRecordOfTransaction } from './support/change-records';

const t = (code: string, extra: Partial<SpannerType> = {}): SpannerType => ({ code, ...extra });
const col = (name: string, type: SpannerType, extra: Partial<TableColumn> = {}, n = 0): TableColumn => ({
  name,
  type,
  nullable: true,
  ordinalPosition: n,
  ...extra,
});

const PEOPLE: TableSchema = {
  name: 'People',
  primaryKey: ['Id'],
  columns: [
    col('Id', t('INT64'), { nullable: false }, 1),
    col('Name', t('STRING'), {}, 2),
    col('Tags', t('ARRAY', { arrayElementType: t('STRING') }), {}, 3),
    col('FullName', t('STRING'), { generated: 'stored' }, 4),
    col('Doubled', t('INT64'), { generated: 'virtual' }, 5),
    col('Tokens', t('TOKENLIST'), { hidden: true, generated: 'virtual' }, 6),
  ],
};

function record(columns: Array<[string, SpannerType]>, n = 1): DataChangeRecord {
  return soleRecordOfTransaction({
    commitTimestamp: fromNanos(BigInt(n)),
    recordSequence: '0',
    serverTransactionId: `t${n}`,
    tableName: 'People',
    columnTypes: columnTypesOf(columns, 'Id'),
    mods: [],
  });
}

describe('replica plans', () => {
  it('replicates key, watched and stored generated columns; leaves out hidden and virtual ones', () => {
    const plan = planReplica(PEOPLE, 'all');
    expect([...plan.columns.keys()]).toEqual(['Id', 'Name', 'Tags', 'FullName']);
    expect(plan.readAtCommit).toEqual(['FullName']);
    expect([...plan.ignored].sort()).toEqual(['Doubled', 'Tokens']);
    expect(plan.keys.map((k) => k.name)).toEqual(['Id']);
  });

  it('replicates only the listed columns of a stream watching a column list', () => {
    const plan = planReplica(PEOPLE, ['Name']);
    expect([...plan.columns.keys()]).toEqual(['Id', 'Name']);
    expect(plan.readAtCommit).toEqual([]);
    expect(plan.ignored.has('Tags')).toBe(true);
  });
});

describe('columns sluice cannot map', () => {
  const rows = [
    {
      COLUMN_NAME: 'Id',
      ORDINAL_POSITION: 1,
      SPANNER_TYPE: 'INT64',
      IS_NULLABLE: 'NO',
      IS_GENERATED: 'NEVER',
      IS_STORED: null,
      IS_HIDDEN: false,
    },
    {
      COLUMN_NAME: 'Shape',
      ORDINAL_POSITION: 2,
      SPANNER_TYPE: 'GEOGRAPHY',
      IS_NULLABLE: 'YES',
      IS_GENERATED: 'NEVER',
      IS_STORED: null,
      IS_HIDDEN: false,
    },
    {
      COLUMN_NAME: 'Tokens',
      ORDINAL_POSITION: 3,
      SPANNER_TYPE: 'TOKENLIST',
      IS_NULLABLE: 'YES',
      IS_GENERATED: 'ALWAYS',
      IS_STORED: 'NO',
      IS_HIDDEN: true,
    },
  ];
  const keys = [{ COLUMN_NAME: 'Id', ORDINAL_POSITION: 1 }];

  it('reads the catalog, and fails planning a replica of the table with a permanent error naming the column', () => {
    const schema = parseTableSchema('Places', 'GOOGLE_STANDARD_SQL', rows, keys);
    expect(schema.columns.map((c) => [c.name, c.unknownType, c.hidden])).toEqual([
      ['Id', undefined, undefined],
      ['Shape', 'GEOGRAPHY', undefined],
      ['Tokens', undefined, true],
    ]);
    let error: { kind?: string; message?: string } | undefined;
    try {
      planReplica(schema, 'all');
    } catch (e) {
      error = e as typeof error;
    }
    expect(error?.kind).toBe('permanent');
    expect(error?.message).toMatch(/column Places\.Shape has Spanner type GEOGRAPHY.*"Places": false/);
    // A stream watching other columns only never needs it.
    expect([...planReplica(schema, []).columns.keys()]).toEqual(['Id']);
  });
});

describe('drift detection', () => {
  const plan = planReplica(PEOPLE, 'all');
  const base: Array<[string, SpannerType]> = [
    ['Id', t('INT64')],
    ['Name', t('STRING')],
    ['Tags', t('ARRAY', { arrayElementType: t('STRING') })],
  ];

  it('finds nothing while every column is known with its type (the hot path)', () => {
    expect(columnDrift(plan, record(base).columnTypes)).toEqual([]);
    expect(firstDrift(plan, [record(base, 1), record(base.slice(0, 2), 2)])).toBeUndefined();
  });

  it('reports an added column, and a changed type (element types included)', () => {
    const added = record([...base, ['Nick', t('STRING')]], 2);
    expect(firstDrift(plan, [record(base, 1), added])).toEqual({
      record: added,
      drift: [{ kind: 'added', column: 'Nick', type: t('STRING') }],
    });
    const changed = record([
      ['Id', t('INT64')],
      ['Name', t('BYTES')],
      ['Tags', t('ARRAY', { arrayElementType: t('BYTES') })],
    ]);
    expect(columnDrift(plan, changed.columnTypes)).toEqual([
      { kind: 'type-changed', column: 'Name', from: t('STRING'), to: t('BYTES') },
      {
        kind: 'type-changed',
        column: 'Tags',
        from: t('ARRAY', { arrayElementType: t('STRING') }),
        to: t('ARRAY', { arrayElementType: t('BYTES') }),
      },
    ]);
  });

  it('ignores a column the plan leaves out on purpose (a read returns virtual generated columns)', () => {
    expect(columnDrift(plan, [{ name: 'Doubled', type: t('INT64') }])).toEqual([]);
  });

  it('compares types by code, annotation and element type', () => {
    expect(sameType(t('NUMERIC'), t('NUMERIC', { typeAnnotation: 'PG_NUMERIC' }))).toBe(false);
    expect(
      sameType(t('ARRAY', { arrayElementType: t('INT64') }), t('ARRAY', { arrayElementType: t('INT64') })),
    ).toBe(true);
    expect(sameType(t('ARRAY', { arrayElementType: t('INT64') }), t('INT64'))).toBe(false);
  });
});
