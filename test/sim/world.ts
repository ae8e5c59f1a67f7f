/**
 * One simulated world: the real scheduler and reader use cases (through the application harness) over the
 * in-memory ports, on a virtual clock, with the simulated change stream, a GCS that fails as GCS may, and a
 * Cloud Tasks dispatcher that delivers at least once, late and in any order. Every choice comes from the
 * run's {@link Decisions}, so a seed is one execution.
 */

import type { PipelineStatus } from '../../shared/app/ledger/status';
import { Reader, type TaskOutcome } from '../../shared/app/replication/reader/reader';
import { Scheduler } from '../../shared/app/replication/scheduler/scheduler';
import { addMillis, type Timestamp } from '../../shared/domain/timestamp';
import type { TaskRequest } from '../../shared/ports/task-queue';
import { FlakyStore } from '../app/support/flaky-store';
import { Harness } from '../app/support/harness';
import { HistoryFaults } from './bigquery';
import type { Decisions } from './decisions';
import { KillableStore, Killer } from './kill';
import { DEFAULT_SOURCE, SimSource, type SourceBehaviour } from './source';

/** The harness with the simulated change stream in place of the script's plain one. */
class SimHarness extends Harness {
  source: SimSource | null = null;
  override scheduler(): Scheduler {
    return new Scheduler(this.simPorts(), this.settings, this.runtime());
  }
  override reader(): Reader {
    return new Reader(this.simPorts(), this.settings, this.runtime());
  }
  private simPorts() {
    return { ...this.ports(), source: this.source ?? this.script };
  }
}

/** What a scenario sets: how long the run is and how often each behaviour happens. */
export interface Scenario {
  name: string;
  /** Steps of the faulty phase (the catch-up phase follows). */
  steps: number;
  /** Partitions the stream starts with. */
  roots: number;
  source: SourceBehaviour;
  /** Probability that a step injects a GCS fault (503/429, a lost write answer). */
  storeFaults: number;
  /** Probability that a delivered task is delivered again later (at-least-once delivery). */
  duplicates: number;
  /** Probability of a split or a merge per scripted event. */
  churn: number;
  /** Probability that a (single) delivery's instance is killed at one of its awaits. */
  kills: number;
  /** Probability that a commit is followed by another transaction at the same commit timestamp. */
  sameTimestamp: number;
  /** Probability that a scripted event is a TTL (system) transaction deleting rows. */
  ttl: number;
  /** Probability that a fault step strikes BigQuery's history appends instead of GCS. */
  historyFaults: number;
  /** Probability that a scheduler tick's instance is killed at one of its awaits. */
  tickKills: number;
  /** Set: the run is a backfill under these fault probabilities instead of the stream. */
  backfill?: { store: number; forget: number };
}

export const DEFAULT_SCENARIO: Scenario = {
  name: 'default',
  steps: 60,
  roots: 2,
  source: DEFAULT_SOURCE,
  storeFaults: 0.1,
  duplicates: 0.1,
  churn: 0.08,
  kills: 0.05,
  sameTimestamp: 0.15,
  ttl: 0.05,
  historyFaults: 0.3,
  tickKills: 0.05,
};

/** The kinds of step the scheduler chooses among; index 0 is the plainest. */
const STEPS = ['deliver', 'tick', 'workload', 'advance', 'deliver-two', 'fault'] as const;

export class SimWorld {
  readonly store = new FlakyStore();
  readonly killer = new Killer();
  readonly h: SimHarness;
  /** Highest watermark seen by a tick (watermark-monotone). */
  watermark: Timestamp | null = null;
  steps = 0;
  /** Partitions some tick saw finished (the scheduler removes finished entries later). */
  readonly finished = new Set<string>();
  readonly outcomes: TaskOutcome[] = [];
  readonly historyFaults: HistoryFaults;

  constructor(
    readonly rng: Decisions,
    readonly scenario: Scenario,
  ) {
    const store = new KillableStore(this.store, this.killer, () => rng.note('gcs-412-conflict'));
    this.h = new SimHarness({ roots: scenario.roots, store });
    this.historyFaults = new HistoryFaults(this.h.history, rng);
    // A request stops at its deadline (ADR-1505); virtual time passes as records arrive (see SimSource).
    this.h.settings = { ...this.h.settings, requestDeadlineMs: 3_000 };
    this.h.source = new SimSource(
      this.h.script,
      rng,
      (ms) => this.h.advance(ms),
      scenario.source,
      this.killer,
    );
  }

  /** One step of the faulty phase, chosen by the schedule. */
  async step(): Promise<PipelineStatus | null> {
    this.steps++;
    this.historyFaults.noteStruck();
    const kind = this.rng.pick(STEPS);
    if (kind === 'deliver') await this.deliverOne(this.rng.chance(this.scenario.kills));
    else if (kind === 'deliver-two') await Promise.all([this.deliverOne(), this.deliverOne()]);
    else if (kind === 'workload') this.workload();
    else if (kind === 'advance') this.h.advance(this.rng.int(5_000));
    else if (kind === 'fault') this.fault();
    else return this.tick(this.rng.chance(this.scenario.tickKills));
    return null;
  }

  /** A scheduler tick; a tick that throws (GCS down) is retried by the next one, as Cloud Scheduler does. */
  async tick(kill = false): Promise<PipelineStatus | null> {
    this.steps++;
    try {
      await this.noteFinished();
      if (!kill) return (await this.h.tick()).status ?? null;
      // The scheduler's instance dies at one of its GCS calls; Cloud Scheduler's next tick runs on another.
      this.killer.arm(this.rng.int(20));
      const out = await Promise.race([this.h.tick(), this.killer.killed.then(() => null)]);
      this.killer.disarm();
      if (out === null) this.rng.note('scheduler-killed-mid-tick');
      return out?.status ?? null;
    } catch {
      this.killer.disarm();
      return null;
    }
  }

  /**
   * Cloud Tasks delivers any due task, not necessarily the oldest (gcp-platform.md, Cloud Tasks: at least once,
   * no order guarantee); a failed delivery comes back later, and any delivery may come twice.
   */
  async deliverOne(kill = false): Promise<void> {
    const nowMs = Number(this.h.now / 1_000_000n);
    const due = this.h.queue.pending.filter((t) => (t.notBeforeMs ?? 0) <= nowMs);
    if (due.length === 0) return;
    const task = this.rng.pick(due);
    this.h.queue.pending.splice(this.h.queue.pending.indexOf(task), 1);
    if (this.rng.chance(this.scenario.duplicates)) this.h.queue.pending.push(structuredClone(task));
    let out: TaskOutcome | null;
    if (kill) {
      this.killer.arm(this.rng.int(30));
      out = await Promise.race([this.deliver(task), this.killer.killed.then(() => null)]);
      this.killer.disarm();
    } else out = await this.deliver(task);
    if (out === null) {
      // No answer: Cloud Tasks retries once the dispatch deadline has passed.
      this.h.queue.pending.push({ ...task, notBeforeMs: nowMs + 10_000 });
    } else if (out.status < 200 || out.status >= 300) {
      this.h.queue.pending.push({ ...task, notBeforeMs: nowMs + 1_000 + this.rng.int(10_000) });
    }
  }

  private async deliver(task: TaskRequest): Promise<TaskOutcome> {
    this.steps++;
    try {
      const out = await this.h.deliver(task);
      this.outcomes.push(out);
      return out;
    } catch (err) {
      // An exception out of the handler is a 500 to Cloud Tasks, which retries.
      return { status: 500, outcome: 'retry', detail: String(err) };
    }
  }

  /** Commits, splits and merges scripted up to the clock (never in the future). */
  workload(): void {
    const { script } = this.h;
    const rng = this.rng;
    const served = this.h.source?.horizon ?? null;
    let at = served !== null && served > script.last ? served : script.last;
    for (let i = 0; i < 1 + rng.int(12); i++) {
      at = addMillis(at, 1 + rng.int(400));
      if (at > this.h.now) break;
      const live = script.live(at);
      if (rng.chance(this.scenario.churn) && live.length < 8) script.split(at, rng.pick(live).token);
      else if (rng.chance(this.scenario.churn) && live.length > 1) {
        script.merge(at, live[0]!.token, live[1]!.token);
      } else if (rng.chance(this.scenario.ttl)) this.ttlDelete(at);
      else {
        script.commit(at, this.mods(new Set()));
        // Transactions on other keys may share the commit timestamp (spanner-change-streams.md §3).
        while (rng.chance(this.scenario.sameTimestamp)) {
          const mods = this.mods(this.keysAt(at));
          if (mods.length === 0) break;
          script.commit(at, mods, { sameTimestamp: true });
          rng.note('same-timestamp-transactions');
        }
      }
    }
  }

  /** The keys (`table/id`) some transaction changed at `at`. */
  private keysAt(at: Timestamp): Set<string> {
    const keys = new Set<string>();
    for (const [table, ids] of this.h.script.versions)
      for (const [id, vs] of ids) if (vs[vs.length - 1]?.at === at) keys.add(`${table}/${id}`);
    return keys;
  }

  /** 1–4 distinct mods of one user transaction, on keys not in `taken` (`table/id`). */
  private mods(taken: Set<string>) {
    const rng = this.rng;
    const mods = Array.from({ length: 1 + rng.int(4) }, () => ({
      table: rng.chance(0.4) ? 'Items' : 'Orders',
      id: rng.int(40),
      val: rng.chance(0.2) ? null : `v${rng.int(1000)}`,
    }));
    return [...new Map(mods.map((m) => [`${m.table}/${m.id}`, m])).values()].filter(
      (m) => !taken.has(`${m.table}/${m.id}`),
    );
  }

  /**
   * A TTL deletion: a system transaction (`is_system_transaction`, tag 'RowDeletionPolicy') deleting rows
   * that exist, between user commits (spanner-change-streams.md §2.2).
   */
  private ttlDelete(at: Timestamp): void {
    const { script } = this.h;
    const rows = [...(script.rows.get('Orders') ?? new Map()).keys()];
    if (rows.length === 0) return;
    const ids = new Set(Array.from({ length: 1 + this.rng.int(3) }, () => this.rng.pick(rows)));
    script.commit(
      at,
      [...ids].map((id) => ({ table: 'Orders', id, val: null })),
      { system: true },
    );
    this.rng.note('ttl-system-transaction');
  }

  /** A GCS fault: 503 or 429 on the next call, or a write applied whose answer is lost (gcp-platform.md). */
  fault(): void {
    if (this.rng.chance(this.scenario.historyFaults)) {
      this.historyFaults.strike();
      return;
    }
    if (!this.rng.chance(this.scenario.storeFaults * 10)) return;
    const which = this.rng.int(3);
    if (which === 0) this.store.errors.push(503);
    else if (which === 1) this.store.errors.push(429);
    else this.store.loseNextWriteResponse = true;
  }

  /** Catch-up (liveness) phase: no more changes or faults; ticks and deliveries until nothing is due. */
  async catchUp(rounds = 40): Promise<PipelineStatus | null> {
    this.store.errors = [];
    this.store.loseNextWriteResponse = false;
    if (this.h.source) this.h.source.quiet = true;
    for (let i = 0; i < rounds; i++) {
      this.h.advance(2_000);
      await this.tick();
      for (let n = 0; n < 200 && this.h.queue.pending.length > 0; n++) {
        const before = this.h.queue.pending.length;
        await this.deliverOne();
        if (this.h.queue.pending.length === before && !this.anyDue()) break;
      }
    }
    this.historyFaults.noteStruck();
    return this.tick();
  }

  /** Remembers the finished partitions before a tick may remove them (child-after-parents needs them). */
  async noteFinished(): Promise<void> {
    const { partitions } = await this.h.ledger.listPartitions();
    for (const { view } of partitions) if (view.state === 'finished') this.finished.add(view.id);
  }

  private anyDue(): boolean {
    const nowMs = Number(this.h.now / 1_000_000n);
    return this.h.queue.pending.some((t) => (t.notBeforeMs ?? 0) <= nowMs);
  }
}
