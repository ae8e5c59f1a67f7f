/**
 * Scheduler + reader over in-memory ports with a controlled clock, and a dispatcher that plays Cloud Tasks:
 * runs due tasks, retries non-2xx answers, and can deliver a task twice.
 */

import { MemoryObjectStore } from '../../../shared/adapters/memory/object-store';
import { MemoryTaskQueue } from '../../../shared/adapters/memory/task-queue';
import type { AppSettings } from '../../../shared/app/common/settings';
import { DeadLetterStore } from '../../../shared/app/ledger/dead-letters';
import { LedgerStore } from '../../../shared/app/ledger/ledger-store';
import { readerTaskSchema } from '../../../shared/app/replication/common/reader-task';
import { Reader, type TaskOutcome } from '../../../shared/app/replication/reader/reader';
import { Scheduler } from '../../../shared/app/replication/scheduler/scheduler';
import { type PipelineConfigInput, parseConfigObject } from '../../../shared/domain/config';
import { createLogger } from '../../../shared/domain/log';
import { addMillis, formatTimestamp, parseTimestamp, type Timestamp } from '../../../shared/domain/timestamp';
import type { ObjectStore } from '../../../shared/ports/object-store';
import type { HistorySink, ReplicaSink } from '../../../shared/ports/sinks';
import type { TaskRequest } from '../../../shared/ports/task-queue';
import { MemoryCompleteness, MemoryHistory, MemoryReplica, ScriptCatalog } from './ports';
import { ScriptedStream } from './script';

export const T0 = parseTimestamp('2026-01-01T00:00:00Z');

export interface HarnessOptions {
  config?: Partial<PipelineConfigInput>;
  store?: ObjectStore;
  roots?: number;
  /** Another history sink than the in-memory one (e.g. BigQuery on the emulator). */
  historySink?: HistorySink;
  /** Another replica sink than the recording one (e.g. the in-memory sink that keeps tables). */
  replicaSink?: ReplicaSink;
}

export class Harness {
  now: Timestamp = addMillis(T0, 1);
  readonly memStore = new MemoryObjectStore();
  readonly store: ObjectStore;
  readonly queue = new MemoryTaskQueue();
  readonly script: ScriptedStream;
  readonly catalog: ScriptCatalog;
  readonly replica = new MemoryReplica();
  /** The history's streams are created on the harness's clock (their age decides rotation). */
  readonly history = new MemoryHistory({ now: () => this.now });
  readonly completeness = new MemoryCompleteness();
  readonly lines: Array<Record<string, unknown>> = [];
  private readonly historySink: HistorySink;
  private readonly replicaSink: ReplicaSink;
  /** Settings of the readers and schedulers made from now on (see {@link reconfigure}). */
  settings: AppSettings;
  private readonly configInput: PipelineConfigInput;
  readonly ledger: LedgerStore;
  readonly deadLetters: DeadLetterStore;
  /** The key the harness's reader seals its dead letters with, as a deployment's reader does (ADR-2305). */
  readonly deadLetterKey = Buffer.alloc(32, 7);
  readonly outcomes: TaskOutcome[] = [];

  constructor(options: HarnessOptions = {}) {
    this.store = options.store ?? this.memStore;
    this.historySink = options.historySink ?? this.history;
    this.replicaSink = options.replicaSink ?? this.replica;
    this.script = new ScriptedStream(T0, options.roots ?? 2);
    this.catalog = new ScriptCatalog(this.script);
    this.configInput = {
      project: 'test-project',
      spanner: { instance: 'inst', database: 'db', stream: 'Changes' },
      bigquery: { dataset: 'ds' },
      ledger: { bucket: 'bucket' },
      tables: { Orders: { replica: 'orders', history: 'orders_history' }, Items: { replica: 'items' } },
      startAt: formatTimestamp(T0),
      leaseMs: 60_000,
      heartbeatMs: 2_000,
      window: { maxMs: 30_000, longPollMs: 1_000 },
      ...options.config,
    };
    const config = parseConfigObject(this.configInput);
    this.settings = {
      config,
      readerUrl: 'http://127.0.0.1/reader',
      retentionMarginMs: 3_600_000,
      idleDelayMs: 5_000,
    };
    // As the wiring does: the logs quote row values as SLUICE_LOG_VALUES allows.
    const log = createLogger(
      (l) => this.lines.push(JSON.parse(l) as Record<string, unknown>),
      { pipeline: 'sluice' },
      'DEBUG',
      config.logValues,
    );
    this.ledger = new LedgerStore(this.store, config.pipeline, log, {
      attempts: 5,
      baseDelayMs: 1,
      maxDelayMs: 1,
      sleep: async () => undefined,
    });
    this.deadLetters = new DeadLetterStore(this.store, config.pipeline, {
      retry: { attempts: 5, baseDelayMs: 1, maxDelayMs: 1, sleep: async () => undefined },
      sealKey: this.deadLetterKey,
    });
  }

  /**
   * A new deployment with other settings (e.g. `SLUICE_TABLES` edited): readers and schedulers made from now
   * on use them; the ledger, the sinks and the change stream stay.
   */
  reconfigure(config: Partial<PipelineConfigInput>): void {
    this.settings = { ...this.settings, config: parseConfigObject({ ...this.configInput, ...config }) };
  }

  runtime() {
    const log = createLogger(
      (l) => this.lines.push(JSON.parse(l) as Record<string, unknown>),
      { pipeline: 'sluice' },
      'DEBUG',
      this.settings.config.logValues,
    );
    return { now: () => this.now, log };
  }

  ports() {
    const { ledger, catalog, queue, completeness, deadLetters } = this;
    const history = this.historySink;
    const replica = this.replicaSink;
    return { ledger, catalog, source: this.script, queue, replica, history, completeness, deadLetters };
  }

  scheduler(): Scheduler {
    return new Scheduler(this.ports(), this.settings, this.runtime());
  }

  reader(): Reader {
    return new Reader(this.ports(), this.settings, this.runtime());
  }

  async tick() {
    return this.scheduler().tick();
  }

  /** Runs one task body through a fresh reader (one request). */
  async deliver(task: TaskRequest): Promise<TaskOutcome> {
    const parsed = readerTaskSchema.parse(task.body);
    const out = await this.reader().run(parsed);
    this.outcomes.push(out);
    return out;
  }

  /** Runs every due task (retrying non-2xx, like Cloud Tasks) until none is due; bounded. */
  async drain(maxTasks = 500): Promise<number> {
    let ran = 0;
    for (let i = 0; i < maxTasks; i++) {
      const nowMs = Number(this.now / 1_000_000n);
      const idx = this.queue.pending.findIndex((t) => (t.notBeforeMs ?? 0) <= nowMs);
      if (idx < 0) break;
      const [task] = this.queue.pending.splice(idx, 1);
      const out = await this.deliver(task!);
      ran++;
      if (out.status < 200 || out.status >= 300) this.queue.pending.push(task!);
    }
    return ran;
  }

  advance(ms: number) {
    this.now = addMillis(this.now, ms);
  }

  events(message: string) {
    return this.lines.filter((l) => l.message === message);
  }

  /** The expected rows of a table from the script's truth, in the replica's value forms. */
  expected(table: string) {
    return [...(this.script.rows.get(table)?.values() ?? [])].sort((a, b) => Number(a.Id) - Number(b.Id));
  }
}
