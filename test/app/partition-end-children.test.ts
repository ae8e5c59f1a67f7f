/**
 * Ending a partition (`endPartition`): which children the ending reader itself marks ready and enqueues — a
 * split's all at once; a merge's child only by the parent that finishes last — and what it writes with them.
 */
import { endPartition } from '../../shared/app/replication/reader/partition-end';
import { type HistoryCursors, partitionId } from '../../shared/domain/ledger';
import { addMillis, addNanos } from '../../shared/domain/timestamp';
import {
  C1,
  C2,
  END,
  EPOCH,
  M,
  merge,
  mergeParentsLeased,
  P,
  promoteAsScheduler,
  rootLeased,
  split,
  T,
  world,
} from './support/partition-end-world';

describe('endPartition: promoting the children', () => {
  const history: HistoryCursors = {
    'ds.orders_history': {
      stream: 'projects/x/datasets/ds/tables/orders_history/streams/s1',
      offset: 7,
      createdAt: T,
      schema: 'f1',
    },
  };

  it('a split: every child is created, marked ready and enqueued by the one call, in the record order', async () => {
    const { w, held } = await rootLeased();
    const out = await endPartition(w.args('r1', addMillis(T, 1_000), history), held, split('p', 'c1', 'c2'));
    expect(out).toEqual([C1, C2]);
    expect(w.queue.pending).toEqual([await w.taskFor(C1), await w.taskFor(C2)]);
    for (const [id, token] of [
      [C1, 'c1'],
      [C2, 'c2'],
    ] as const) {
      const child = (await w.read(id))!;
      expect(child).toMatchObject({
        id,
        token,
        state: 'ready',
        epoch: EPOCH,
        start: END,
        position: addNanos(END, -1n),
        end: null,
        lease: null,
        parentTokens: ['p'],
        parentIds: [P],
        history: {},
      });
      expect(child.writer).not.toBe('create');
    }
    // The parent: finished just before the end, its lease dropped, its children, records and cursors recorded.
    expect(await w.read(P)).toMatchObject({
      state: 'finished',
      position: addNanos(END, -1n),
      end: END,
      lease: null,
      childTokens: ['c1', 'c2'],
      childIds: [C1, C2],
      counters: { records: 3 },
      history,
    });
  });

  it('a merge whose parents finish one at a time: the first creates the child, the second enqueues it', async () => {
    const { w, a, b, now } = await mergeParentsLeased();
    expect(await endPartition(w.args('ra', now), a, merge('m', 'b', 'a'))).toEqual([]);
    expect(w.queue.pending).toEqual([]);
    const created = (await w.read(M))!;
    expect(created).toMatchObject({
      state: 'waiting',
      parentTokens: ['a', 'b'],
      parentIds: [partitionId('a'), partitionId('b')],
      start: END,
      writer: 'create',
    });
    const generation = (await w.store.inner.read(w.name(M)))!.generation;
    expect(await endPartition(w.args('rb', now), b, merge('m', 'a', 'b'))).toEqual([M]);
    expect((await w.read(M))!.state).toBe('ready');
    expect(w.queue.pending).toEqual([await w.taskFor(M)]);
    // One child entry: the second parent's create found it, and only the promotion wrote it again.
    expect((await w.ids()).filter((id) => id === M)).toEqual([M]);
    expect((await w.read(M))!).toEqual({ ...created, state: 'ready', writer: (await w.read(M))!.writer });
    expect((await w.store.inner.read(w.name(M)))!.generation).not.toBe(generation);
  });

  it('a merge child promoted meanwhile (by the scheduler) is still enqueued and reported by the last parent', async () => {
    const { w, a, b, now } = await mergeParentsLeased();
    await endPartition(w.args('ra', now), a, merge('m', 'a', 'b'));
    // Right after b's finishing write, before b promotes the child, the scheduler marks it ready.
    w.store.after(w.name(partitionId('b')), async () => {
      expect((await promoteAsScheduler(w)).kind).toBe('written');
    });
    expect(await endPartition(w.args('rb', now), b, merge('m', 'a', 'b'))).toEqual([M]);
    expect(w.queue.pending).toEqual([await w.taskFor(M)]);
  });

  it('a merge child a reader already took is neither reported nor enqueued again', async () => {
    const { w, a, b, now } = await mergeParentsLeased();
    await endPartition(w.args('ra', now), a, merge('m', 'a', 'b'));
    w.store.after(w.name(partitionId('b')), async () => {
      await promoteAsScheduler(w);
      await w.lease('m', 'rm', now);
    });
    expect(await endPartition(w.args('rb', now), b, merge('m', 'a', 'b'))).toEqual([]);
    expect(w.queue.pending).toEqual([]);
    expect((await w.read(M))!).toMatchObject({ state: 'leased', lease: { holder: 'rm' } });
  });

  it('a parent the ledger does not hold counts as unfinished: the child waits, nothing is enqueued', async () => {
    const w = world();
    await w.roots('a');
    const a = await w.lease('a', 'ra');
    expect(await endPartition(w.args('ra', addMillis(T, 1_000)), a, merge('m', 'a', 'x'))).toEqual([]);
    expect((await w.read(M))!.state).toBe('waiting');
    expect((await w.read(partitionId('a')))!.state).toBe('finished');
    expect(w.queue.pending).toEqual([]);
  });

  it('a child removed before its promotion is skipped; its sibling is still enqueued', async () => {
    const { w, held } = await rootLeased();
    w.store.after(w.name(P), async () => w.remove(C1));
    expect(await endPartition(w.args('r1', addMillis(T, 1_000)), held, split('p', 'c1', 'c2'))).toEqual([C2]);
    expect(w.queue.pending).toEqual([await w.taskFor(C2)]);
  });
});
