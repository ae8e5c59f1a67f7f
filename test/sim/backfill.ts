/**
 * The backfill under simulation: the real `startBackfill` and `runPartition` over the in-memory backfill
 * fixtures (test/app/backfill/support.ts), with a GCS that fails any call as GCS may, a BigQuery that forgets
 * a committed stream, and Cloud Tasks delivering partition tasks at least once in any order. Every choice
 * comes from the run's {@link Decisions}.
 */
import { MemoryObjectStore } from '../../shared/adapters/memory/object-store';
import { getBackfill, runPartition, startBackfill } from '../../shared/app/backfill';
import { parsePartitionTask } from '../../shared/domain/backfill/job';
import type {
  ObjectPage,
  ObjectStore,
  StoredObject,
  WriteOptions,
  WriteOutcome,
} from '../../shared/ports/object-store';
import type { TaskRequest } from '../../shared/ports/task-queue';
import { AppendHistory, harness, seedOrders } from '../app/backfill/support';
import type { Decisions } from './decisions';
import { InvariantError } from './invariants';

/**
 * GCS as gcp-platform.md describes it: any call may answer 503 or 429 (retryable, §1), and a write may be
 * applied while its answer is lost (the client sees an error; the object is there).
 */
class SimStore implements ObjectStore {
  readonly inner = new MemoryObjectStore();
  /** Probability of each fault per call (0 while the job is planned). */
  p = 0;
  constructor(private readonly rng: Decisions) {}
  private gate(): void {
    if (this.rng.chance(this.p))
      throw Object.assign(new Error('HTTP 503'), { code: this.rng.pick([503, 429]) });
  }
  async read(name: string): Promise<StoredObject | undefined> {
    this.gate();
    return this.inner.read(name);
  }
  async write(name: string, data: Buffer, options: WriteOptions): Promise<WriteOutcome> {
    this.gate();
    const out = await this.inner.write(name, data, options);
    if (this.rng.chance(this.p)) throw Object.assign(new Error('HTTP 503 (applied)'), { code: 503 });
    return out;
  }
  async delete(name: string, generation: string): Promise<WriteOutcome> {
    this.gate();
    return this.inner.delete(name, generation);
  }
  async list(prefix: string, options?: { pageToken?: string; maxResults?: number }): Promise<ObjectPage> {
    this.gate();
    return this.inner.list(prefix, options);
  }
}

/**
 * BigQuery's history sink, which may no longer know a stream it committed: a COMMITTED stream expires after
 * three days without traffic and streams are never listed again (bigquery-storage-write.md §2.4), so a
 * task retried later asks about a stream BigQuery has forgotten, while its rows stay in the table.
 */
class ForgetfulHistory extends AppendHistory {
  private readonly committed = new Set<string>();
  constructor(
    private readonly rng: Decisions,
    private readonly p: number,
  ) {
    super();
  }
  override async commitStream(destination: string, stream: string): Promise<'committed' | 'gone'> {
    if (this.committed.has(stream) && this.rng.chance(this.p)) return 'gone';
    const out = await super.commitStream(destination, stream);
    if (out === 'committed') this.committed.add(stream);
    return out;
  }
}

/** Runs one backfill of a few orders under faults, then checks its invariants. @throws InvariantError */
export async function runBackfill(
  rng: Decisions,
  faults: { store: number; forget: number },
): Promise<number> {
  const h = harness();
  const store = new SimStore(rng);
  const history = new ForgetfulHistory(rng, faults.forget);
  h.deps.store = store;
  h.deps.history = history;
  seedOrders(h, 2 + rng.int(8));
  const started = await startBackfill(h.deps, { tables: ['Orders'] });
  if (!started.ok) throw new Error(started.problems.join('; '));
  const job = started.value;
  const pending: TaskRequest[] = h.queue.drain();
  let steps = 0;
  // GCS misbehaves once the job is planned (the planner's own retries are another scenario's business).
  store.p = faults.store;
  for (; pending.length > 0 && steps < 400; steps++) {
    const task = pending.splice(rng.int(pending.length), 1)[0]!;
    if (rng.chance(0.1)) pending.push(task); // delivered again later (at least once)
    try {
      await runPartition(h.deps, parsePartitionTask(task.body));
    } catch {
      pending.push(task); // a non-2xx answer: Cloud Tasks retries
    }
    h.tick();
  }
  store.p = 0;
  const view = await getBackfill(h.deps, job.id);
  const T = job.snapshot.readTimestamp;
  const expected = h.snapshots.rowsAt('Orders', T).length;
  const rows = history.rows;
  const distinct = new Set(rows.map((r) => r.change_id)).size;
  if (distinct !== rows.length) {
    throw new InvariantError(
      'history-exactly-once',
      `backfill history holds ${rows.length} rows for ${distinct} change ids, the snapshot has ${expected}`,
    );
  }
  // The one outcome that may stop a job (ADR-2111): a commit sent, its answer never recorded, and the stream
  // forgotten at the retry — nothing can tell whether it was applied, so the job fails naming the stream.
  // That failure must be visible and must not have written anything twice; any other end must be complete.
  if (view?.state === 'failed' && /BatchCommit|commit was sent|server_transaction_id/.test(view.error ?? ''))
    return steps;
  if (rows.length !== expected) {
    throw new InvariantError(
      'history-exactly-once',
      `backfill history holds ${rows.length} rows for ${distinct} change ids, the snapshot has ${expected}`,
    );
  }
  if (view?.state !== 'succeeded') {
    throw new InvariantError('backfill-completes', `backfill ${job.id} is ${view?.state} after every retry`);
  }
  return steps;
}
