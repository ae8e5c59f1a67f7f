import { ConfigError, parseConfig } from '../../../shared/domain/config';

const ENV = {
  SLUICE_PROJECT: 'my-project',
  SLUICE_SPANNER_INSTANCE: 'inst-1',
  SLUICE_SPANNER_DATABASE: 'shop',
  SLUICE_SPANNER_STREAM: 'ShopChanges',
  SLUICE_BIGQUERY_DATASET: 'shop_cdc',
  SLUICE_LEDGER_BUCKET: 'my-bucket',
};

function problems(tables: unknown): string[] {
  try {
    parseConfig({ ...ENV, SLUICE_TABLES: JSON.stringify(tables) });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues.map((i) => `${i.path}: ${i.rule}`);
  }
  return [];
}

describe('destination checks of the table map', () => {
  it('accepts separate destinations and a history shared by several sources', () => {
    expect(
      problems({
        Orders: { replica: 'orders', history: 'changes' },
        Items: { replica: 'items', history: 'changes' },
      }),
    ).toEqual([]);
  });

  it('refuses a replica and a history of one name, naming both and the fix', () => {
    const [p, ...rest] = problems({ Orders: { replica: 'orders', history: 'orders' } });
    expect(rest).toEqual([]);
    expect(p).toMatch(/^tables\.Orders\.history/);
    expect(p).toMatch(/"orders" is also the replica table of this table/);
    expect(p).toMatch(/orders_history/);
  });

  it('refuses two sources into one replica, also when they differ only in case', () => {
    const [p] = problems({ Orders: { replica: 'orders' }, Orders2: { replica: 'Orders' } });
    expect(p).toMatch(/^tables\.Orders2\.replica/);
    expect(p).toMatch(/case-insensitive dataset/);
    expect(p).toMatch(/two source tables cannot share a replica/);
  });

  it('refuses reserved names and reports every problem at once', () => {
    const all = problems({
      Orders: { replica: '_sluice_completeness' },
      Items: { replica: 'x', history: 'x' },
    });
    expect(all).toHaveLength(2);
    expect(all[0]).toMatch(/reserved/);
  });
});
