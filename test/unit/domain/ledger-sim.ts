/**
 * A simulation of readers and schedulers working on one ledger, interleaved step by step, with the GCS
 * semantics the protocol relies on (generation preconditions, create-only, listing with metadata, retried
 * writes whose first attempt won) and invariant checks at every write (DESIGN §4).
 */
import {
  acquireLease,
  advancePosition,
  boundaryOf,
  completeWindow,
  entriesFromChildPartitions,
  finishPartition,
  fromMetadata,
  isOwnWrite,
  markReady,
  observe,
  type PartitionEntry,
  parseEntry,
  planTick,
  planWindow,
  releaseLease,
  serializeEntry,
  startWindow,
  type Transition,
  toMetadata,
  type WindowProgress,
  watermark,
} from '../../../shared/domain/ledger';
import { addMillis, type Timestamp } from '../../../shared/domain/timestamp';
import { MS, type StreamModel, T0 } from './ledger-model';

interface StoredObject {
  body: string;
  md: Record<string, string>;
  gen: number;
}

class PreconditionFailed extends Error {}

/** GCS as the ledger sees it: generations, preconditions, strongly consistent listing. */
export class Store {
  readonly objects = new Map<string, StoredObject>();
  private gen = 1;
  /** The next conditional write succeeds on the server but its response is lost; the retry gets 412. */
  loseNextResponse = false;

  get(name: string): StoredObject | undefined {
    return this.objects.get(name);
  }

  write(name: string, body: string, md: Record<string, string>, ifGen: number): void {
    const cur = this.objects.get(name);
    if ((cur?.gen ?? 0) !== ifGen) throw new PreconditionFailed(name);
    this.objects.set(name, { body, md, gen: this.gen++ });
    if (this.loseNextResponse) {
      this.loseNextResponse = false;
      throw new PreconditionFailed(name);
    }
  }

  delete(name: string, ifGen: number): void {
    if (this.objects.get(name)?.gen !== ifGen) throw new PreconditionFailed(name);
    this.objects.delete(name);
  }
}

const LEASE_MS = 50;
const SETTINGS = { mode: 'scheduled' as const, maxWindowMs: 30, longPollMs: 0 };

/** The simulated pipeline and its invariant checks. */
export class Simulation {
  readonly store = new Store();
  readonly sink = new Set<string>();
  readonly queue: string[] = [];
  readonly removed = new Set<string>();
  readonly stats = {
    repeatedCreates: 0,
    mergeRaces: 0,
    lostResponses: 0,
    takeovers: 0,
    duplicatesRefused: 0,
  };
  now: Timestamp = addMillis(T0, 1);
  private lastWatermark: Timestamp | null = null;
  private lastPosition = new Map<string, Timestamp>();
  private writers = 0;

  constructor(readonly model: StreamModel) {
    for (const e of entriesFromChildPartitions(model.initialRecord(), 1)) this.createOnly(e);
    this.queue.push(...[...this.store.objects.keys()]);
  }

  private newWriter(): string {
    return `w${this.writers++}`;
  }

  read(id: string): { entry: PartitionEntry; gen: number } | undefined {
    const o = this.store.get(id);
    return o && { entry: parseEntry(o.body, id), gen: o.gen };
  }

  /**
   * Create-only (`ifGenerationMatch=0`). An existing entry must describe the same partition; one nobody has
   * written since its creation must hold exactly the same bytes (invariant 4: the merge race).
   */
  private createOnly(entry: PartitionEntry): void {
    const body = serializeEntry(entry);
    try {
      this.store.write(entry.id, body, toMetadata(entry), 0);
      return;
    } catch (err) {
      if (!(err instanceof PreconditionFailed)) throw err;
    }
    const cur = this.read(entry.id);
    if (!cur) return; // removed meanwhile: it had finished and its children had started
    const same =
      cur.entry.writer === 'create'
        ? this.store.get(entry.id)!.body === body
        : cur.entry.token === entry.token;
    if (!same || cur.entry.start !== entry.start) throw new Error(`two creators disagree on ${entry.id}`);
    this.stats.repeatedCreates++;
    if (entry.parentIds.length > 1) this.stats.mergeRaces++;
  }

  /**
   * Compare-and-swap write of a transition. Returns the stored entry when this writer won — also when the
   * response was lost and a retry got 412 (the writer token says it was ours) — or undefined when it lost.
   */
  private cas(t: Transition, gen: number): PartitionEntry | undefined {
    if (!t.ok) return undefined;
    const next = t.entry;
    this.check(next);
    try {
      this.store.write(next.id, serializeEntry(next), toMetadata(next), gen);
      return next;
    } catch (err) {
      if (!(err instanceof PreconditionFailed)) throw err;
      const reread = this.read(next.id);
      if (reread && isOwnWrite(reread.entry, next.writer)) {
        this.stats.lostResponses++;
        return reread.entry;
      }
      return undefined;
    }
  }

  /** Invariant 1 at every write: position only forward, every record at or before it is in the sink. */
  private check(next: PartitionEntry): void {
    const before = this.lastPosition.get(next.id);
    if (before !== undefined && next.position < before) throw new Error(`position of ${next.id} went back`);
    this.lastPosition.set(next.id, next.position);
    for (const key of this.model.keysThrough(next.position, next.token)) {
      if (!this.sink.has(key)) throw new Error(`position of ${next.id} passed unwritten record ${key}`);
    }
  }

  /** Invariant 2: every parent of the partition is finished (or removed, which implies finished earlier). */
  private checkParentsFinished(entry: PartitionEntry): void {
    for (const pid of entry.parentIds) {
      const parent = this.read(pid);
      if (parent ? parent.entry.state !== 'finished' : !this.removed.has(pid)) {
        throw new Error(`child ${entry.id} read before parent ${pid} finished`);
      }
    }
  }

  /** One reader invocation for a task of partition `id`, one store operation per step. */
  *reader(id: string, budget: number): Generator<void, void> {
    const holder = this.newWriter();
    let got = this.read(id);
    if (!got) return;
    let entry = this.cas(
      acquireLease(got.entry, { holder, now: this.now, durationMs: LEASE_MS, writer: this.newWriter() }),
      got.gen,
    );
    if (!entry) {
      this.stats.duplicatesRefused++;
      return;
    }
    if (got.entry.state === 'leased') {
      // A lease is ownership until it expires: only an expired one may be taken over.
      if (got.entry.lease!.expiresAt > this.now) throw new Error(`live lease of ${id} taken over`);
      this.stats.takeovers++;
    }
    const window = planWindow(entry, this.now, SETTINGS);
    if (window === null) {
      yield;
      got = this.read(id);
      if (got)
        this.cas(releaseLease(got.entry, { holder, writer: this.newWriter(), windowDone: false }), got.gen);
      return;
    }
    this.checkParentsFinished(entry);
    let progress: WindowProgress = startWindow(window);
    const records = this.model.query(entry.token, window.from, window.to);
    let buffered: string[] = [];
    let seen = 0;
    for (const { record, key } of records) {
      progress = observe(progress, record);
      if (key) buffered.push(key);
      if (++seen >= budget) break;
    }
    if (seen === records.length && !progress.end) progress = completeWindow(progress);
    yield;
    // Flush the sinks (at-least-once: a crashed reader's rows may be written again by the next one).
    for (const k of buffered) this.sink.add(k);
    buffered = [];
    yield;
    if (progress.end) {
      yield* this.finish(id, holder, progress);
      return;
    }
    const boundary = boundaryOf(progress);
    got = this.read(id);
    if (!got) return;
    if (boundary) {
      entry = this.cas(advancePosition(got.entry, { holder, boundary, writer: this.newWriter() }), got.gen);
      if (!entry) return;
      yield;
      got = this.read(id);
      if (!got) return;
    }
    if (this.cas(releaseLease(got.entry, { holder, writer: this.newWriter() }), got.gen)) this.queue.push(id);
  }

  private *finish(id: string, holder: string, progress: WindowProgress): Generator<void, void> {
    const end = progress.end!;
    const epoch = this.read(id)?.entry.epoch ?? 1;
    const record = {
      kind: 'child-partitions' as const,
      startTimestamp: end.at,
      recordSequence: '0',
      childPartitions: end.children,
    };
    for (const child of entriesFromChildPartitions(record, epoch)) {
      this.createOnly(child);
      yield;
    }
    const got = this.read(id);
    if (!got) return;
    const done = this.cas(finishPartition(got.entry, { holder, end, writer: this.newWriter() }), got.gen);
    if (!done) return;
    for (const cid of done.childIds ?? []) {
      yield;
      const child = this.read(cid);
      if (child?.entry.state !== 'waiting') continue;
      const parents = child.entry.parentIds.flatMap((p) => this.read(p)?.entry ?? []);
      if (this.cas(markReady(child.entry, parents, this.newWriter()), child.gen)) this.queue.push(cid);
    }
  }

  /** A scheduler tick: list (metadata only), then act on the plan one object at a time. */
  *tick(): Generator<void, void> {
    const listed = [...this.store.objects.entries()].map(([name, o]) => ({
      name,
      gen: o.gen,
      view: fromMetadata(o.md),
    }));
    const plan = planTick(
      listed.map((l) => l.view),
      this.now,
      1,
    );
    this.checkWatermark(plan.watermark);
    const views = new Map(listed.map((l) => [l.view.id, l]));
    for (const id of plan.promote) {
      yield;
      const got = this.read(id);
      const parents = got?.entry.parentIds.flatMap((p) => views.get(p)?.view ?? []) ?? [];
      if (got && this.cas(markReady(got.entry, parents, this.newWriter()), got.gen)) this.queue.push(id);
    }
    this.queue.push(...plan.enqueue, ...plan.expired);
    for (const id of plan.removable) {
      yield;
      this.remove(id, views.get(id)!.gen);
    }
  }

  /** Invariant 6 checked against the store at the moment of deletion (the plan may be stale). */
  private remove(id: string, gen: number): void {
    const got = this.read(id);
    if (!got || got.gen !== gen) return;
    for (const cid of got.entry.childIds ?? []) {
      const child = this.read(cid);
      if (!child && !this.removed.has(cid)) throw new Error(`removing ${id} before child ${cid} exists`);
      if (child && child.entry.counters.leases === 0)
        throw new Error(`removing ${id} before child ${cid} started`);
    }
    this.store.delete(id, gen);
    this.removed.add(id);
  }

  /** Invariant 5: the watermark never goes back, and the sinks hold every record at or before it. */
  checkWatermark(wm: Timestamp | null): void {
    const truth = watermark([...this.store.objects.values()].map((o) => parseEntry(o.body)));
    if (wm !== truth) throw new Error('watermark from metadata differs from the entries');
    if (wm === null) return;
    if (this.lastWatermark !== null && wm < this.lastWatermark) throw new Error('watermark went back');
    this.lastWatermark = wm;
    for (const key of this.model.keysThrough(wm)) {
      if (!this.sink.has(key)) throw new Error(`watermark passed unwritten record ${key}`);
    }
  }

  /** Advances the clock (never past a little beyond the model's horizon). */
  advance(ms: number): void {
    const next = addMillis(this.now, ms);
    this.now = next < addMillis(this.model.horizon, 200) ? next : this.now;
  }

  static readonly MS = MS;
}
