/**
 * The policy decisions of schema and stream drift: type changes (same BigQuery type, widening, incompatible),
 * field evolution of an existing table, stream options that hide changes, and keyed reads at a timestamp.
 */
import type { SpannerType } from '../../../shared/domain/change-record';
import { canonicalKey, keyedRowsQuery, quoteName } from '../../../shared/domain/row-reads';
import { hidingOptions, streamOptionProblems } from '../../../shared/domain/stream-options';
import { compareFields, decideSpannerTypeChange, planFields } from '../../../shared/domain/type-changes';

const t = (code: string, extra: Partial<SpannerType> = {}): SpannerType => ({ code, ...extra });
/** The change of non-key column `c` from one Spanner type to another. */
const decide = (from: SpannerType, to: SpannerType) => decideSpannerTypeChange('c', from, to, false);
/** What `decide` answers for `c` when the column widens, narrows or cannot change, by BigQuery type. */
const widen = (from: string, to: string) => ({ kind: 'widen', column: 'c', from, to });
const narrow = (from: string, to: string) => ({ kind: 'narrow', column: 'c', from, to });
const incompatible = (have: string, want: string) => ({ kind: 'incompatible', column: 'c', have, want });

describe('type changes', () => {
  it('needs nothing when both Spanner types map to the same BigQuery type', () => {
    expect(decide(t('ENUM'), t('INT64'))).toEqual({ kind: 'same' });
    expect(decide(t('PROTO'), t('BYTES'))).toEqual({ kind: 'same' });
    expect(decide(t('FLOAT32'), t('FLOAT64'))).toEqual({ kind: 'same' });
  });

  it('widens numbers in place the way BigQuery can', () => {
    expect(decide(t('INT64'), t('NUMERIC'))).toEqual(widen('INT64', 'NUMERIC'));
    expect(decide(t('NUMERIC'), t('NUMERIC', { typeAnnotation: 'PG_NUMERIC' }))).toEqual(
      widen('NUMERIC', 'BIGNUMERIC'),
    );
    expect(decide(t('INT64'), t('FLOAT64')).kind).toBe('widen');
  });

  it('refuses what BigQuery cannot convert: STRING ↔ BYTES, narrowing, arrays and scalars', () => {
    expect(decide(t('STRING'), t('BYTES'))).toEqual(incompatible('STRING', 'BYTES'));
    expect(decide(t('FLOAT64'), t('INT64')).kind).toBe('incompatible');
    expect(
      compareFields(
        { name: 'c', type: 'INT64', repeated: false },
        { name: 'c', type: 'INT64', mode: 'REPEATED' },
      ),
    ).toMatchObject({ kind: 'incompatible', have: 'INT64', want: 'INT64 REPEATED' });
  });

  it('writes a narrower value into a column already widened, but never into FLOAT64 (it would round)', () => {
    expect(decide(t('NUMERIC'), t('INT64'))).toEqual(narrow('NUMERIC', 'INT64'));
    expect(
      planFields(
        [{ name: 'c', type: 'BIGNUMERIC' }],
        [{ name: 'c', type: 'NUMERIC', mode: 'NULLABLE' }],
        't',
      ),
    ).toEqual({ add: [], widen: [] });
    expect(decide(t('FLOAT64'), t('NUMERIC')).kind).toBe('incompatible');
  });

  it('plans a table: new columns added as NULLABLE, widening listed, legacy REST names understood', () => {
    const existing = [
      { name: 'Id', type: 'INTEGER', mode: 'REQUIRED' },
      { name: 'N', type: 'INTEGER', mode: 'NULLABLE' },
    ];
    const plan = planFields(
      existing,
      [
        { name: 'Id', type: 'INT64', mode: 'REQUIRED' },
        { name: 'N', type: 'NUMERIC', mode: 'NULLABLE' },
        { name: 'New', type: 'STRING', mode: 'REQUIRED' },
      ],
      'people',
    );
    expect(plan).toEqual({
      add: [{ name: 'New', type: 'STRING', mode: 'NULLABLE' }],
      widen: [{ name: 'N', to: 'NUMERIC' }],
    });
  });

  it('names table, column, both types and the fix when a change is incompatible', () => {
    const attempt = () =>
      planFields(
        [{ name: 'Nick', type: 'STRING' }],
        [{ name: 'Nick', type: 'BYTES', mode: 'NULLABLE' }],
        'people',
        'People',
        new Map([['Nick', t('BYTES')]]),
      );
    expect(attempt).toThrow(
      /column People\.Nick changed type: it is now BYTES in Spanner, which maps to BigQuery BYTES, but the replica table people holds it as STRING.*Fix: drop \(or rename\) the replica table people in BigQuery, then backfill People/,
    );
    try {
      attempt();
    } catch (e) {
      expect((e as { kind?: string }).kind).toBe('permanent');
    }
  });
});

describe('stream options', () => {
  it('reads which hiding options are on (absent and false are off, any case)', () => {
    expect(
      hidingOptions({ exclude_delete: 'TRUE', exclude_insert: 'false', retention_period: '7d' }),
    ).toEqual(['exclude_delete']);
  });

  it('refuses each option that hides changes, naming it and both fixes, per dialect', () => {
    const raw = { exclude_update: 'true', exclude_ttl_deletes: 'true' };
    const gsql = streamOptionProblems(raw, [], 'Changes', 'GOOGLE_STANDARD_SQL');
    expect(gsql).toHaveLength(2);
    expect(gsql[0]).toMatch(
      /^exclude_update = true: the stream does not record updates.*Fix: ALTER CHANGE STREAM Changes SET OPTIONS \(exclude_update = false\), or accept it with SLUICE_ACCEPT_STREAM_OPTIONS=exclude_update$/,
    );
    expect(gsql[1]).toMatch(/TTL.*some pipelines want/);
    expect(streamOptionProblems(raw, [], 'changes', 'POSTGRESQL')[0]).toMatch(
      /ALTER CHANGE STREAM changes SET \(exclude_update = false\)/,
    );
  });

  it('accepts an option the configuration accepts on purpose', () => {
    expect(
      streamOptionProblems(
        { exclude_ttl_deletes: 'true' },
        ['exclude_ttl_deletes'],
        'S',
        'GOOGLE_STANDARD_SQL',
      ),
    ).toEqual([]);
  });
});

describe('keyed reads at a commit timestamp', () => {
  const keys = [
    { name: 'A', type: t('INT64') },
    { name: 'B', type: t('STRING') },
  ];

  it('binds every key part as a typed parameter; NULL parts compare with IS NULL', () => {
    expect(
      keyedRowsQuery('GOOGLE_STANDARD_SQL', 'T', keys, [
        { A: '1', B: 'x' },
        { A: '2', B: null },
      ]),
    ).toEqual({
      sql: 'SELECT * FROM `T` WHERE (`A` = @k1 AND `B` = @k2) OR (`A` = @k3 AND `B` IS NULL)',
      params: { k1: '1', k2: 'x', k3: '2' },
      types: { k1: 'int64', k2: 'string', k3: 'int64' },
    });
    expect(keyedRowsQuery('POSTGRESQL', 'sales.t', keys, [{ A: '1', B: 'x' }]).sql).toBe(
      'SELECT * FROM "sales"."t" WHERE ("A" = $1 AND "B" = $2)',
    );
    expect(quoteName('GOOGLE_STANDARD_SQL', 'we`ird')).toBe('`we``ird`');
  });

  it('gives a mod key and the same key read from a row one text', () => {
    const ts = [
      { name: 'At', type: t('TIMESTAMP') },
      { name: 'N', type: t('NUMERIC') },
      { name: 'I', type: t('INT64') },
    ];
    expect(canonicalKey(ts, { At: '2024-01-01T00:00:00.5Z', N: '1.50', I: 7 })).toBe(
      canonicalKey(ts, { At: '2024-01-01T00:00:00.500000000Z', N: '1.5', I: '7' }),
    );
  });
});
