/**
 * The reads of a window a few ahead (ADR-3003): answers used in item order whatever order they arrive in, never
 * more than `ahead` in flight, a failed read thrown at its turn (the ones before it used, none after), and no
 * unhandled rejection from a read that failed while an earlier one was in use.
 */
import { readAhead } from '../../shared/app/common';

/** A read whose answer arrives when the test says so. */
function controlled<T>() {
  const calls: Array<{ item: T; resolve: (v: string) => void; reject: (e: Error) => void }> = [];
  const read = (item: T) =>
    new Promise<string>((resolve, reject) => {
      calls.push({ item, resolve, reject });
    });
  return { calls, read };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('readAhead', () => {
  it('uses every answer in item order, even when they arrive in reverse', async () => {
    const { calls, read } = controlled<number>();
    const used: string[] = [];
    const done = readAhead([1, 2, 3, 4], read, (a, item) => void used.push(`${item}:${a}`), 4);
    await tick();
    expect(calls.map((c) => c.item)).toEqual([1, 2, 3, 4]);
    for (const c of [...calls].reverse()) c.resolve(`r${c.item}`);
    await done;
    expect(used).toEqual(['1:r1', '2:r2', '3:r3', '4:r4']);
  });

  it('keeps at most `ahead` reads in flight and starts the next as one is used', async () => {
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    const items = Array.from({ length: 20 }, (_, i) => i);
    await readAhead(
      items,
      async (i) => {
        started.push(i);
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, (i * 7) % 5));
        inFlight--;
        return i * 2;
      },
      (a, i) => expect(a).toBe(i * 2),
      3,
    );
    expect(most).toBe(3);
    expect(started).toEqual(items);
  });

  it('runs each use after the one before has finished, so a use may change what the next sees', async () => {
    const trace: string[] = [];
    await readAhead(
      ['a', 'b', 'c'],
      async (x) => x,
      async (x) => {
        trace.push(`start ${x}`);
        await new Promise((r) => setTimeout(r, 5));
        trace.push(`end ${x}`);
      },
    );
    expect(trace).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('throws a failed read at its turn: the answers before it are used, none after', async () => {
    const { calls, read } = controlled<number>();
    const used: number[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const done = readAhead([1, 2, 3], read, (_a, item) => void used.push(item), 3);
      await tick();
      calls[1]!.reject(new Error('read 2 failed'));
      calls[2]!.resolve('r3');
      await tick();
      expect(used).toEqual([]);
      calls[0]!.resolve('r1');
      await expect(done).rejects.toThrow('read 2 failed');
      expect(used).toEqual([1]);
      await tick();
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('stops at a failed use and starts no read beyond what was in flight', async () => {
    const started: number[] = [];
    await expect(
      readAhead(
        [1, 2, 3, 4, 5, 6],
        async (i) => {
          started.push(i);
          return i;
        },
        (i) => {
          if (i === 2) throw new Error('use 2 failed');
        },
        2,
      ),
    ).rejects.toThrow('use 2 failed');
    expect(started).toEqual([1, 2, 3]);
  });

  it('refuses a bound below one, naming it', async () => {
    await expect(
      readAhead(
        [1],
        async () => 1,
        () => undefined,
        0,
      ),
    ).rejects.toThrow(/ahead must be ≥ 1 \(got 0\)/);
  });

  it('does nothing for no items', async () => {
    const read = jest.fn(async () => 1);
    await readAhead([], read, () => undefined);
    expect(read).not.toHaveBeenCalled();
  });
});
