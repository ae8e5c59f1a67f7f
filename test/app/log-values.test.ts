/**
 * Row values in the reader's logs and status (ADR-2307): a poison record whose value holds an SSN-like text
 * fails its partition (or is set aside); under the default SLUICE_LOG_VALUES=none no log line and no status
 * quotes the value or the key, under `keys` the key only, under `all` both. The dead letter keeps the row.
 */
import type { LogValues } from '../../shared/domain/log-values';
import { keyHash } from '../../shared/domain/log-values';
import { addMillis } from '../../shared/domain/timestamp';
import { Harness, T0 } from './support/harness';

const SSN = '123-45-6789';

/** A record of Orders 3 whose Val (a STRING column) comes as an object holding the SSN: it cannot be mapped. */
async function poisonedRun(policy: 'fail' | 'dead-letter', logValues?: LogValues) {
  const h = new Harness({ roots: 1, config: { onBadRecord: policy, ...(logValues ? { logValues } : {}) } });
  h.script.commit(addMillis(T0, 100), [{ table: 'Orders', id: 3, val: 'poison' }]);
  h.script.poisoned.set('Orders/3', { ssn: SSN });
  for (let i = 0; i < 4; i++) {
    h.now = addMillis(T0, 2_000 + i * 6_000);
    await h.tick();
    await h.drain();
  }
  const status = (await h.tick()).status!;
  return { h, status, logged: JSON.stringify(h.lines) };
}

describe('a reader failure on a record holding an SSN-like value', () => {
  it('default (none): the failure is logged and in the status, without the value or the key', async () => {
    const { h, status, logged } = await poisonedRun('fail');
    expect(status.partitions.failed).toBe(1);
    expect(h.events('partition.failed')).toHaveLength(1);
    expect(h.events('partition.failed')[0]).toMatchObject({ table: 'Orders', key: keyHash('{"Id":"3"}') });
    expect(logged).not.toContain(SSN);
    expect(logged).not.toContain('{\\"Id\\":\\"3\\"}');
    const statusText = JSON.stringify(status);
    expect(statusText).not.toContain(SSN);
    expect(status.lastErrors[0]).toMatchObject({ record: { table: 'Orders', key: keyHash('{"Id":"3"}') } });
    expect(status.lastErrors[0]!.message).toMatch(/Orders\.Val/);
  });

  it('keys: the key is logged, the value is not', async () => {
    const { status, logged } = await poisonedRun('fail', 'keys');
    expect(logged).not.toContain(SSN);
    expect(logged).toContain('{\\"Id\\":\\"3\\"}');
    expect(status.lastErrors[0]).toMatchObject({ record: { key: '{"Id":"3"}' } });
  });

  it('all: the value and the key are logged, as before the setting', async () => {
    const { status, logged } = await poisonedRun('fail', 'all');
    expect(logged).toContain(SSN);
    expect(JSON.stringify(status.lastErrors)).toContain(SSN);
  });

  it('dead-letter: the letter keeps the whole row to be replayable; its log line quotes neither', async () => {
    const { h, status, logged } = await poisonedRun('dead-letter');
    expect(status.deadLetters).toMatchObject({ pending: 1 });
    const [line] = h.events('record.dead-lettered');
    expect(line).toMatchObject({ table: 'Orders', column: 'Val', key: keyHash('{"Id":"3"}') });
    expect(logged).not.toContain(SSN);
    const { items } = await h.deadLetters.page();
    const letter = await h.deadLetters.read(items[0]!.id);
    const text = JSON.stringify(letter!.value, (_, v) => (typeof v === 'bigint' ? String(v) : v));
    expect(text).toContain(SSN);
  });
});
