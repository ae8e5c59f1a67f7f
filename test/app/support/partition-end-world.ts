/**
 * The world of the partition-end tests: `endPartition` over the real ledger store on the in-memory object
 * store and task queue. Concurrent writers are played by a wrapper of the object store that runs a step just
 * before or just after a chosen write, as another reader or the scheduler would.
 */

import { MemoryObjectStore } from '../../../shared/adapters/memory/object-store';
import { MemoryTaskQueue } from '../../../shared/adapters/memory/task-queue';
import { LedgerStore } from '../../../shared/app/ledger/ledger-store';
import { readerTaskId } from '../../../shared/app/replication/common/reader-task';
import {
  acquireLease,
  entriesFromChildPartitions,
  type HistoryCursors,
  markReady,
  type PartitionEnd,
  type PartitionEntry,
  partitionId,
} from '../../../shared/domain/ledger';
import { createLogger } from '../../../shared/domain/log';
import { addMillis, formatTimestamp, parseTimestamp, type Timestamp } from '../../../shared/domain/timestamp';
import type {
  ObjectPage,
  ObjectStore,
  StoredObject,
  WriteOptions,
  WriteOutcome,
} from '../../../shared/ports/object-store';

export const T = parseTimestamp('2026-01-01T00:00:00Z');
/** Where the parents end: their child-partitions record's start timestamp. */
export const END = addMillis(T, 10_000);
export const EPOCH = 3;
export const PIPELINE = 'p1';
export const READER_URL = 'https://reader.example/run';
export const LEASE_MS = 60_000;
export const fast = { attempts: 2, baseDelayMs: 1, maxDelayMs: 1, sleep: async () => undefined };

/** The object store with a step run once around the next write of a chosen object. */
export class SteppedStore implements ObjectStore {
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
export async function rootLeased(holder = 'r1') {
  const w = world();
  await w.roots('p');
  return { w, held: await w.lease('p', holder) };
}

/** A world with roots a and b, leased by ra and rb at T, about to end at T + 1 s into merge child m. */
export async function mergeParentsLeased() {
  const w = world();
  await w.roots('a', 'b');
  return { w, a: await w.lease('a', 'ra'), b: await w.lease('b', 'rb'), now: addMillis(T, 1_000) };
}

/** Marks merge child m ready over its parents a and b as they are now, as the scheduler's promotion does. */
export async function promoteAsScheduler(w: ReturnType<typeof world>) {
  const parents = [(await w.read(partitionId('a')))!, (await w.read(partitionId('b')))!];
  return w.ledger.updatePartition(EPOCH, M, (e, writer) => markReady(e, parents, writer));
}

export function world() {
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
export function split(parent: string, ...children: string[]): PartitionEnd {
  return { at: END, children: children.map((token) => ({ token, parentPartitionTokens: [parent] })) };
}

/** The end of one of `parents`, all merging into `child`. */
export function merge(child: string, ...parents: string[]): PartitionEnd {
  return { at: END, children: [{ token: child, parentPartitionTokens: parents }] };
}

export const P = partitionId('p');
export const C1 = partitionId('c1');
export const C2 = partitionId('c2');
export const M = partitionId('m');

/** The rejection of `promise`, which must reject. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
}
