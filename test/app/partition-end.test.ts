/**
 * Ending a partition (`endPartition`) over the in-memory ledger and task queue: the stalled reader's guard
 * before any child is created, a finishing write that is refused, and which children the ending reader itself
 * marks ready and enqueues (a split's all at once; a merge's child only by the parent that finishes last).
 * Concurrent writers are played by a wrapper of the object store that runs a step just before or just after
 * a chosen write, as another reader or the scheduler would.
 */

import { MemoryObjectStore } from '../../shared/adapters/memory/object-store';
import { MemoryTaskQueue } from '../../shared/adapters/memory/task-queue';
import { LedgerStore } from '../../shared/app/ledger/ledger-store';
import { readerTaskId } from '../../shared/app/replication/common/reader-task';
import { endPartition } from '../../shared/app/replication/reader/partition-end';
import { isFatal, SluiceError } from '../../shared/domain/errors';
import {
  acquireLease,
  entriesFromChildPartitions,
  type HistoryCursors,
  markReady,
  type PartitionEnd,
  type PartitionEntry,
  partitionId,
  releaseLease,
} from '../../shared/domain/ledger';
import { createLogger } from '../../shared/domain/log';
import {
  addMillis,
  addNanos,
  formatTimestamp,
  parseTimestamp,
  type Timestamp,
} from '../../shared/domain/timestamp';
import type {
  ObjectPage,
  ObjectStore,
  StoredObject,
  WriteOptions,
  WriteOutcome,
} from '../../shared/ports/object-store';

const T = parseTimestamp('2026-01-01T00:00:00Z');
/** Where the parents end: their child-partitions record's start timestamp. */
const END = addMillis(T, 10_000);
const EPOCH = 3;
const PIPELINE = 'p1';
const READER_URL = 'https://reader.example/run';
const LEASE_MS = 60_000;
const fast = { attempts: 2, baseDelayMs: 1, maxDelayMs: 1, sleep: async () => undefined };

/** The object store with a step run once around the next write of a chosen object. */
class SteppedStore implements ObjectStore {
  readonly inner = new MemoryObjectStore();
  private readonly steps: Array<{ when: 'before' | 'after'; name: string; run: () => Promise<void> }> = [];
  /** Names written, in order. */
  readonly writes: string[] = [];

  before(name: string, run: () => Promise<void>): void {
    this.steps.push({ when: 'before', name, run });
  }
  after(name: string, run: () => Promise<void>): void {
    this.steps.push({ when: 'after', name, run });
  }
  private take(when: 'before' | 'after', name: string) {
    const i = this.steps.findIndex((s) => s.when === when && s.name === name);
    return i >= 0 ? this.steps.splice(i, 1)[0]!.run : undefined;
  }
  read(name: string): Promise<StoredObject | undefined> {
    return this.inner.read(name);
  }
  async write(name: string, data: Buffer, options: WriteOptions): Promise<WriteOutcome> {
    this.writes.push(name);
    await this.take('before', name)?.();
    const out = await this.inner.write(name, data, options);
    await this.take('after', name)?.();
    return out;
  }
  delete(name: string, generation: string): Promise<WriteOutcome> {
    return this.inner.delete(name, generation);
  }
  list(prefix: string, options?: { pageToken?: string; maxResults?: number }): Promise<ObjectPage> {
    return this.inner.list(prefix, options);
  }
}

/** A world with root partition p leased by `holder` at T, and that lease. */
async function rootLeased(holder = 'r1') {
  const w = world();
  await w.roots('p');
  return { w, held: await w.lease('p', holder) };
}

/** A world with roots a and b, leased by ra and rb at T, about to end at T + 1 s into merge child m. */
async function mergeParentsLeased() {
  const w = world();
  await w.roots('a', 'b');
  return { w, a: await w.lease('a', 'ra'), b: await w.lease('b', 'rb'), now: addMillis(T, 1_000) };
}

/** Marks merge child m ready over its parents a and b as they are now, as the scheduler's promotion does. */
async function promoteAsScheduler(w: ReturnType<typeof world>) {
  const parents = [(await w.read(partitionId('a')))!, (await w.read(partitionId('b')))!];
  return w.ledger.updatePartition(EPOCH, M, (e, writer) => markReady(e, parents, writer));
}

function world() {
  const store = new SteppedStore();
  const ledger = new LedgerStore(
    store,
    PIPELINE,
    createLogger(() => undefined),
    fast,
  );
  const queue = new MemoryTaskQueue();
  const name = (id: string) => ledger.paths.partition(EPOCH, id);
  const read = async (id: string) => (await ledger.readPartition(EPOCH, id))?.value;
  const ids = async () => (await ledger.listPartitions()).partitions.map((p) => p.view.id).sort();
  /** Creates root partitions (no parents: ready) for `tokens`. */
  const roots = async (...tokens: string[]) => {
    const entries = entriesFromChildPartitions(
      {
        kind: 'child-partitions',
        startTimestamp: T,
        recordSequence: '0',
        childPartitions: tokens.map((token) => ({ token, parentPartitionTokens: [] })),
      },
      EPOCH,
    );
    for (const e of entries) await ledger.createPartition(e);
  };
  /** `holder` takes the lease at `now`; returns the entry as that reader holds it. */
  const lease = async (token: string, holder: string, now: Timestamp = T): Promise<PartitionEntry> => {
    const out = await ledger.updatePartition(EPOCH, partitionId(token), (e, writer) =>
      acquireLease(e, { holder, now, durationMs: LEASE_MS, writer }),
    );
    if (out.kind !== 'written') throw new Error(`lease of ${token}: ${out.kind}`);
    return out.entry;
  };
  const args = (holder: string, now: Timestamp, history?: HistoryCursors) => ({
    ledger,
    queue,
    readerUrl: READER_URL,
    pipeline: PIPELINE,
    holder,
    records: 3,
    ...(history ? { history } : {}),
    now,
  });
  /** The reader task the queue should hold for `id`, as of the child's entry in the ledger now. */
  const taskFor = async (id: string) => {
    const child = (await read(id))!;
    const task = { pipeline: PIPELINE, epoch: EPOCH, partition: id, position: child.position };
    return {
      queue: 'reader',
      id: readerTaskId(task, child.writer),
      url: READER_URL,
      body: { pipeline: PIPELINE, epoch: EPOCH, partition: id, position: formatTimestamp(child.position) },
      shardKey: id,
    };
  };
  /** Deletes the entry of `id` behind the ledger's back, as a scheduler that removed it would. */
  const remove = async (id: string) => {
    const current = (await store.inner.read(name(id)))!;
    await store.inner.delete(name(id), current.generation);
  };
  return { store, ledger, queue, name, read, ids, roots, lease, args, taskFor, remove };
}

/** A split of `parent` into `children` (each with `parent` as its only parent). */
function split(parent: string, ...children: string[]): PartitionEnd {
  return { at: END, children: children.map((token) => ({ token, parentPartitionTokens: [parent] })) };
}

/** The end of one of `parents`, all merging into `child`. */
function merge(child: string, ...parents: string[]): PartitionEnd {
  return { at: END, children: [{ token: child, parentPartitionTokens: parents }] };
}

const P = partitionId('p');
const C1 = partitionId('c1');
const C2 = partitionId('c2');
const M = partitionId('m');

/** The rejection of `promise`, which must reject. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
}

describe('endPartition: the stalled reader finds its parent changed before creating children', () => {
  it('a parent now leased by another reader: a conflict, no child created, nothing enqueued', async () => {
    const w = world();
    await w.roots('p');
    const stale = await w.lease('p', 'r1');
    // r1 stalled past its lease; r2 took the partition over.
    const taken = await w.lease('p', 'r2', addMillis(T, LEASE_MS + 1_000));
    const err = await rejection(
      endPartition(w.args('r1', addMillis(T, LEASE_MS + 2_000)), stale, split('p', 'c1', 'c2')),
    );
    expect(err).toBeInstanceOf(SluiceError);
    expect(err).toMatchObject({
      kind: 'conflict',
      message: `not creating the children of ${P}: its lease is no longer this reader's (leased)`,
    });
    expect(isFatal((err as SluiceError).kind)).toBe(false);
    expect(await w.ids()).toEqual([P]);
    expect(w.queue.pending).toEqual([]);
    expect(await w.read(P)).toEqual(taken);
  });

  it('its own lease expired (at the expiry instant): a conflict, no child created', async () => {
    const { w, held } = await rootLeased();
    const err = await rejection(endPartition(w.args('r1', held.lease!.expiresAt), held, split('p', 'c1')));
    expect(err).toBeInstanceOf(SluiceError);
    expect(err).toMatchObject({
      kind: 'conflict',
      message: `not creating the children of ${P}: its lease is no longer this reader's (leased)`,
    });
    expect(await w.ids()).toEqual([P]);
    expect(w.queue.pending).toEqual([]);
    expect(await w.read(P)).toEqual(held);
    // One millisecond earlier the same call ends the partition.
    const v = world();
    await v.roots('p');
    const again = await v.lease('p', 'r1');
    expect(
      await endPartition(v.args('r1', addMillis(again.lease!.expiresAt, -1)), again, split('p', 'c1')),
    ).toEqual([C1]);
  });

  it('a parent given back meanwhile (ready): the conflict names its state', async () => {
    const { w, held } = await rootLeased();
    await w.ledger.updatePartition(EPOCH, P, (e, writer) => releaseLease(e, { holder: 'r1', writer }));
    const err = await rejection(endPartition(w.args('r1', addMillis(T, 1_000)), held, split('p', 'c1')));
    expect(err).toBeInstanceOf(SluiceError);
    expect(err).toMatchObject({
      kind: 'conflict',
      message: `not creating the children of ${P}: its lease is no longer this reader's (ready)`,
    });
    expect(await w.ids()).toEqual([P]);
    expect(w.queue.pending).toEqual([]);
  });

  it('an entry already gone (the lineage finished and removed): a conflict, no child created', async () => {
    const { w, held } = await rootLeased();
    await w.remove(P);
    const err = await rejection(
      endPartition(w.args('r1', addMillis(T, 1_000)), held, split('p', 'c1', 'c2')),
    );
    expect(err).toBeInstanceOf(SluiceError);
    expect(err).toMatchObject({
      kind: 'conflict',
      message: `not creating the children of ${P}: its entry is gone (the lineage was finished by another reader)`,
    });
    expect(await w.ids()).toEqual([]);
    expect(w.queue.pending).toEqual([]);
  });

  it('a parent already finished by another reader: no ids, no write, nothing enqueued', async () => {
    const w = world();
    await w.roots('p');
    const stale = await w.lease('p', 'r1');
    const later = addMillis(T, LEASE_MS + 1_000);
    const taken = await w.lease('p', 'r2', later);
    expect(await endPartition(w.args('r2', later), taken, split('p', 'c1', 'c2'))).toEqual([C1, C2]);
    w.queue.drain();
    // A child has moved on since: a reader holds it.
    await w.lease('c1', 'r3', later);
    const before = await Promise.all([P, C1, C2].map((id) => w.store.inner.read(w.name(id))));
    const writes = w.store.writes.length;
    expect(await endPartition(w.args('r1', later), stale, split('p', 'c1', 'c2'))).toEqual([]);
    expect(w.store.writes.length).toBe(writes);
    expect(await Promise.all([P, C1, C2].map((id) => w.store.inner.read(w.name(id))))).toEqual(before);
    expect(w.queue.pending).toEqual([]);
  });
});

describe('endPartition: a refused finish', () => {
  it('the finishing write loses to another reader that took the lease: "could not finish", a conflict', async () => {
    const { w, held } = await rootLeased();
    // Between the re-read and the finishing write the lease runs out and r2 takes the partition: r1's
    // conditional write finds another generation, and on re-reading the finish is refused.
    w.store.before(w.name(P), async () => {
      await w.lease('p', 'r2', addMillis(T, LEASE_MS + 1_000));
    });
    const err = await rejection(
      endPartition(w.args('r1', addMillis(T, 1_000)), held, split('p', 'c1', 'c2')),
    );
    expect(err).toBeInstanceOf(SluiceError);
    expect(err).toMatchObject({
      kind: 'conflict',
      message: `could not finish ${P}: partition ${P} is not leased by r1`,
    });
    expect(isFatal((err as SluiceError).kind)).toBe(false);
    const parent = (await w.read(P))!;
    expect(parent).toMatchObject({ state: 'leased', lease: { holder: 'r2' }, end: null });
    // The children were created before the finish (create-only; the next finisher writes the same), and
    // stay waiting: nothing was enqueued.
    expect(await w.ids()).toEqual([P, C1, C2].sort());
    expect((await w.read(C1))!.state).toBe('waiting');
    expect((await w.read(C2))!.state).toBe('waiting');
    expect(w.queue.pending).toEqual([]);
  });

  it('the parent removed before its finishing write: "could not finish <id>: missing"', async () => {
    const { w, held } = await rootLeased();
    w.store.before(w.name(P), async () => w.remove(P));
    const err = await rejection(endPartition(w.args('r1', addMillis(T, 1_000)), held, split('p', 'c1')));
    expect(err).toBeInstanceOf(SluiceError);
    expect(err).toMatchObject({ kind: 'conflict', message: `could not finish ${P}: missing` });
    expect(w.queue.pending).toEqual([]);
  });
});

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
