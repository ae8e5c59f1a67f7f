/**
 * A snapshot row whose history row no AppendRows request can carry (ADR-2114): it follows the bad-record
 * policy as a window's row does (ADR-2113). The in-memory history sink refuses a request over BigQuery's
 * 20 MB as the service does (bigquery-storage-write.md §2.5), so without the rule the partition fails.
 */
import { getBackfill, runPartition, startBackfill } from '../../../shared/app/backfill';
import { DeadLetterStore } from '../../../shared/app/ledger';
import { parsePartitionTask } from '../../../shared/domain/backfill/job';
import { checkSeal } from '../../../shared/domain/dead-letter-seal';
import { keyHash } from '../../../shared/domain/log-values';
import { formatTimestamp } from '../../../shared/domain/timestamp';
import { harness } from './support';

type H = ReturnType<typeof harness>;

/**
 * Control characters take six bytes each in the history's JSON (`\u0001`) and one in the replica row, so
 * this value's history row is over 20 MB while its replica row is a few MB (the replica takes it).
 */
const HEAVY = '\u0001'.repeat(3_400_000);

/** Orders 1 to 5, one commit each; order `heavy` holds {@link HEAVY}. */
function seed(h: H, heavy: number): void {
  for (let i = 1; i <= 5; i++) {
    const row = {
      OrderId: String(i),
      Customer: i === heavy ? HEAVY : `c${i}`,
      Amount: String(i),
      Secret: 'x',
    };
    h.snapshots.write('Orders', ['OrderId'], row, h.tick());
  }
}

async function backfillWithHeavyRow(policy: 'fail' | 'dead-letter', deadLetterKey?: Buffer) {
  const h = harness();
  h.deps.config.onBadRecord = policy;
  if (deadLetterKey) h.deps.deadLetterKey = deadLetterKey;
  seed(h, 3);
  const started = await startBackfill(h.deps, { tables: ['Orders'] });
  if (!started.ok) throw new Error(started.problems.join('; '));
  const job = started.value;
  for (const task of h.queue.drain()) await runPartition(h.deps, parsePartitionTask(task.body));
  return { h, job, view: await getBackfill(h.deps, job.id) };
}

const historyKeys = (h: H) => h.history.rows.map((r) => JSON.parse(r.keys).OrderId as string).sort();

describe('a backfill row whose history row is over the AppendRows request limit', () => {
  it('under dead-letter: the row is set aside with its key, column and snapshot timestamp; the rest is written once', async () => {
    const { h, job, view } = await backfillWithHeavyRow('dead-letter');
    expect(view).toMatchObject({ state: 'succeeded', error: null });
    expect(historyKeys(h)).toEqual(['1', '2', '4', '5']);
    expect(new Set(h.history.rows.map((r) => r.change_id)).size).toBe(4);
    expect(h.replica.rows('orders')).toHaveLength(5);
    const letters = new DeadLetterStore(h.store, 'demo');
    const page = await letters.page({ details: true });
    expect(page.items).toEqual([
      expect.objectContaining({
        table: 'Orders',
        state: 'pending',
        reason: 'permanent:UnrepresentableError',
        records: 1,
        key: '{"OrderId":"3"}',
        column: 'Customer',
        commitTimestamp: formatTimestamp(job.snapshot.readTimestamp),
        message: expect.stringMatching(/AppendRows request may carry/),
      }),
    ]);
    expect((await letters.counts()).pending).toBe(1);
    const logged = h.lines.find((l) => l.includes('"record.dead-lettered"') && l.includes(job.id));
    // Under the default SLUICE_LOG_VALUES=none the key shows as its hash, never as its values (ADR-2307).
    expect(logged).toContain(keyHash('{"OrderId":"3"}'));
    expect(logged).not.toContain('OrderId\\":\\"3');
  });

  it('under dead-letter with a key: the letter is sealed as the reader seals its own, so replay trusts it', async () => {
    const key = Buffer.alloc(32, 7);
    const { h } = await backfillWithHeavyRow('dead-letter', key);
    const letters = new DeadLetterStore(h.store, 'demo');
    const [item] = (await letters.page({})).items;
    const letter = (await letters.read(String(item?.id)))?.value;
    expect(letter?.seal).toMatch(/^hmac-sha256:/);
    expect(checkSeal(letter as NonNullable<typeof letter>, { key, trustUnsigned: false })).toEqual({
      trusted: true,
      unsigned: false,
    });
  });

  it('under dead-letter: a partition retried after a crash finds the letter it wrote, and no history row twice', async () => {
    const h = harness();
    h.deps.config.onBadRecord = 'dead-letter';
    h.deps.batchRows = 1;
    // The heavy row has the smallest key, so it is the first row its partition yields and is written alone.
    seed(h, 1);
    const started = await startBackfill(h.deps, { tables: ['Orders'] });
    if (!started.ok) throw new Error(started.problems.join('; '));
    const unavailable = Object.assign(new Error('14 UNAVAILABLE: connection reset'), { code: 14 });
    for (const task of h.queue.drain()) {
      const t = parsePartitionTask(task.body);
      // Each first attempt reads one row (written: a letter for the heavy one), then its read breaks.
      h.snapshots.failReads(1, unavailable);
      await expect(runPartition(h.deps, t)).rejects.toMatchObject({ kind: 'retryable' });
      expect(await runPartition(h.deps, t)).toMatchObject({ kind: 'done' });
    }
    expect((await getBackfill(h.deps, started.value.id))?.state).toBe('succeeded');
    const letters = new DeadLetterStore(h.store, 'demo');
    expect((await letters.page({ details: true })).items).toEqual([
      expect.objectContaining({ key: '{"OrderId":"1"}', column: 'Customer' }),
    ]);
    expect(h.lines.some((l) => l.includes('already written by an earlier attempt'))).toBe(true);
    expect(historyKeys(h)).toEqual(['2', '3', '4', '5']);
    expect(new Set(h.history.rows.map((r) => r.change_id)).size).toBe(4);
  });

  it('under fail: the job fails naming the table, column, key and snapshot timestamp', async () => {
    const { h, job, view } = await backfillWithHeavyRow('fail');
    expect(view?.state).toBe('failed');
    expect(view?.error).toContain(
      `bad record in Orders.Customer key {"OrderId":"3"} committed at ${formatTimestamp(job.snapshot.readTimestamp)}`,
    );
    expect(await new DeadLetterStore(h.store, 'demo').counts()).toMatchObject({ pending: 0 });
  });
});
