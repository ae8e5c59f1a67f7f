/**
 * A reader that lost its lease must not replace (finalize) a history stream its successor is writing to
 * (ADR-1607): replacing renews the lease in one ledger compare-and-swap first, and a reader that lost it
 * stops there with a conflict.
 */
import { addMillis } from '../../shared/domain/timestamp';
import { Harness } from './support/harness';

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 2_000 && !condition(); i++) await new Promise((r) => setTimeout(r, 2));
  if (!condition()) throw new Error('condition not reached');
}

it('a reader past its lease finds its stream due for rotation and leaves the successor’s stream alone', async () => {
  const h = new Harness({ roots: 1, config: { leaseMs: 60_000, history: { streamMaxAgeMs: 90_000 } } });
  let at = addMillis(h.now, 1);
  for (let i = 0; i < 8; i++) {
    h.script.commit(at, [{ table: 'Orders', id: i, val: `v${i}` }]);
    at = addMillis(at, 2);
  }
  h.now = addMillis(at, 10);
  // Reading takes time: each data record moves the clock on, so a window flushes part way.
  h.script.onRecord = () => h.advance(1_500);
  await h.tick();
  const task = h.queue.pending.shift()!;

  // A: creates the stream, records it, and stalls in its first append.
  const pauseA = h.history.pauseNextAppend();
  const a = h.deliver(task);
  await until(() => pauseA.taken());
  const [stream] = h.history.created;
  expect(stream).toBeDefined();

  // Its lease expires; B takes the partition over from the ledger and stalls in an append on the same stream.
  h.advance(61_000);
  const pauseB = h.history.pauseNextAppend();
  const b = h.deliver({ ...task });
  await until(() => pauseB.taken());
  expect(h.history.created).toEqual([stream]);

  // Time passes (still inside B's lease): the stream is now old enough to be rotated; A wakes up first.
  h.advance(40_000);
  pauseA.resume();
  const outA = await a;
  expect(outA.outcome).toBe('noop');
  expect(h.history.stream(stream!)?.finalized).toBe(false);
  expect(h.history.created).toEqual([stream]);

  // B carries on (it rotates the stream itself, holding the lease) and everything is there once.
  pauseB.resume();
  await b;
  h.script.onRecord = null;
  for (let i = 0; i < 4; i++) {
    h.advance(65_000);
    await h.tick();
    await h.drain();
  }
  const ids = h.history.rows('orders_history').map((r) => r.change_id);
  expect(ids).toHaveLength(8);
  expect(new Set(ids).size).toBe(8);
  expect((await h.tick()).status!.partitions.failed).toBe(0);
  expect(h.events('history.stream-rotated').map((e) => e.reason)).toContain('age');
});
