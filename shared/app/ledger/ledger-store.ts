/**
 * The ledger over an {@link ObjectStore}: partition entries, the manifest and the status object under
 * `<pipeline>/` (docs/ARCHITECTURE.md, ADR-201). Every write is compare-and-swap with a fresh writer token, so
 * a 412 that answers the client's own retried write is recognised as the success it was; a lost race re-reads
 * and re-decides. A corrupt object is refused and reported, never overwritten.
 */
import { SluiceError } from '../../domain/errors';
import {
  isOwnWrite,
  ledgerPaths,
  type Manifest,
  type PartitionEntry,
  type PartitionView,
  parseEntry,
  parseManifest,
  partitionIdFromName,
  serializeEntry,
  serializeManifest,
  type Transition,
  toMetadata,
} from '../../domain/ledger';
import { fromMetadata } from '../../domain/ledger/metadata';
import type { Logger } from '../../domain/log';
import { listAll, type ObjectStore } from '../../ports/object-store';
import { DEFAULT_RETRY, type RetryPolicy, withRetries } from '../common';
import {
  forgetTable,
  type MarkerScope,
  markTable,
  type TableEvidence,
  type TableKind,
  tableEvidence,
} from '../tables';
import { type PipelineStatus, withLagSample } from './status';
import { newWriterToken, type Versioned } from './versioned';

export { newWriterToken, type Versioned } from './versioned';

/** A partition as a listing shows it: its view (from metadata only) and its object's name and generation. */
export interface ListedPartition {
  name: string;
  generation: string;
  view: PartitionView;
}

/** Outcome of a read-decide-write cycle on one partition. */
export type UpdateOutcome =
  | { kind: 'written'; entry: PartitionEntry; generation: string }
  | { kind: 'unchanged'; entry: PartitionEntry }
  | { kind: 'refused'; entry: PartitionEntry; refusal: string; message: string }
  | { kind: 'missing' };

/** Lost races in a row after which an update gives up (each one means another writer made progress). */
const MAX_CONFLICTS = 8;

const JSON_TYPE = 'application/json';

/** The ledger of one pipeline. */
export class LedgerStore {
  readonly paths: ReturnType<typeof ledgerPaths>;

  constructor(
    private readonly store: ObjectStore,
    readonly pipeline: string,
    private readonly log: Logger,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {
    this.paths = ledgerPaths(pipeline);
  }

  private call<T>(what: string, op: () => Promise<T>): Promise<T> {
    return withRetries(what, op, this.retry);
  }

  /**
   * Reads one partition entry, or undefined when absent.
   * @throws SluiceError (`permanent`) when the object is corrupt — after logging `ledger.corrupt`.
   */
  async readPartition(epoch: number, id: string): Promise<Versioned<PartitionEntry> | undefined> {
    const name = this.paths.partition(epoch, id);
    const obj = await this.call(`read ${name}`, () => this.store.read(name));
    if (!obj) return undefined;
    try {
      return { value: parseEntry(obj.data.toString('utf8'), name), generation: obj.generation };
    } catch (err) {
      this.log.error('ledger.corrupt', err, { object: name, generation: obj.generation });
      throw err;
    }
  }

  /**
   * Writes `entry` if the object still has `generation`. Returns the new generation, or undefined when another
   * writer won (a 412 whose stored writer is ours is our own earlier attempt: success).
   */
  async writePartition(entry: PartitionEntry, generation: string): Promise<string | undefined> {
    const name = this.paths.partition(entry.epoch, entry.id);
    const outcome = await this.call(`write ${name}`, () =>
      this.store.write(name, Buffer.from(serializeEntry(entry)), {
        ifGeneration: generation,
        metadata: toMetadata(entry),
        contentType: JSON_TYPE,
        writerToken: entry.writer,
      }),
    );
    if (outcome.ok) return outcome.generation;
    const now = await this.readPartition(entry.epoch, entry.id);
    return now && isOwnWrite(now.value, entry.writer) ? now.generation : undefined;
  }

  /**
   * Read, decide, compare-and-swap; on a lost race, read again and decide again. `decide` gets a fresh writer
   * token for each attempt and returns a transition, or null for "nothing to write".
   */
  async updatePartition(
    epoch: number,
    id: string,
    decide: (entry: PartitionEntry, writer: string) => Transition | null,
  ): Promise<UpdateOutcome> {
    for (let i = 0; i < MAX_CONFLICTS; i++) {
      const current = await this.readPartition(epoch, id);
      if (!current) return { kind: 'missing' };
      const t = decide(current.value, newWriterToken());
      if (t === null || (t.ok && t.entry === current.value))
        return { kind: 'unchanged', entry: current.value };
      if (!t.ok) return { kind: 'refused', entry: current.value, refusal: t.refusal, message: t.message };
      const generation = await this.writePartition(t.entry, current.generation);
      if (generation) return { kind: 'written', entry: t.entry, generation };
    }
    throw new SluiceError('retryable', `partition ${id}: ${MAX_CONFLICTS} lost races in a row`);
  }

  /** Creates an entry only if absent (children of a child-partitions record). "Exists" is fine. */
  async createPartition(entry: PartitionEntry): Promise<'created' | 'exists'> {
    const name = this.paths.partition(entry.epoch, entry.id);
    const outcome = await this.call(`create ${name}`, () =>
      this.store.write(name, Buffer.from(serializeEntry(entry)), {
        ifGeneration: 0,
        metadata: toMetadata(entry),
        contentType: JSON_TYPE,
        writerToken: entry.writer,
      }),
    );
    return outcome.ok ? 'created' : 'exists';
  }

  /** Deletes an entry if it still has `generation`; false when it changed or is gone. */
  async deleteObject(name: string, generation: string): Promise<boolean> {
    const outcome = await this.call(`delete ${name}`, () => this.store.delete(name, generation));
    return outcome.ok;
  }

  /**
   * Every partition of every epoch, from listing metadata only (about N/1000 list calls, no reads). Objects
   * whose metadata is unreadable are returned in `corrupt` and logged, never rewritten.
   */
  async listPartitions(): Promise<{
    partitions: ListedPartition[];
    corrupt: Array<{ name: string; message: string }>;
    calls: number;
  }> {
    const prefix = this.paths.partitionsPrefix;
    const { items, calls } = await this.call(`list ${prefix}`, () => listAll(this.store, prefix));
    const partitions: ListedPartition[] = [];
    const corrupt: Array<{ name: string; message: string }> = [];
    for (const item of items) {
      if (!partitionIdFromName(item.name)) continue;
      try {
        partitions.push({
          name: item.name,
          generation: item.generation,
          view: fromMetadata(item.metadata, item.name),
        });
      } catch (err) {
        this.log.error('ledger.corrupt', err, { object: item.name });
        corrupt.push({ name: item.name, message: (err as Error).message });
      }
    }
    return { partitions, corrupt, calls };
  }

  /** The manifest, or undefined before the first run. @throws SluiceError (`permanent`) when corrupt. */
  async readManifest(): Promise<Versioned<Manifest> | undefined> {
    const name = this.paths.manifest;
    const obj = await this.call(`read ${name}`, () => this.store.read(name));
    if (!obj) return undefined;
    try {
      return { value: parseManifest(obj.data.toString('utf8'), name), generation: obj.generation };
    } catch (err) {
      this.log.error('ledger.corrupt', err, { object: name });
      throw err;
    }
  }

  /**
   * Writes the manifest with compare-and-swap (`generation` 0: create only). Returns the new generation, or
   * undefined when another writer won.
   */
  async writeManifest(manifest: Manifest, generation: string | 0): Promise<string | undefined> {
    const name = this.paths.manifest;
    const outcome = await this.call(`write ${name}`, () =>
      this.store.write(name, Buffer.from(serializeManifest(manifest)), {
        ifGeneration: generation,
        contentType: JSON_TYPE,
        writerToken: manifest.writer,
      }),
    );
    if (outcome.ok) return outcome.generation;
    const now = await this.readManifest();
    return now?.value.writer === manifest.writer ? now.generation : undefined;
  }

  /** Where the table markers live, with this ledger's retries (ADR-1515, ADR-1516). */
  private get markers(): MarkerScope {
    return {
      store: this.store,
      name: (kind, destination) => this.paths.ensured(kind, destination),
      readStatus: () => this.readStatus(),
      call: (what, op) => this.call(what, op),
    };
  }

  /**
   * What the ledger says of a BigQuery table: ensured before (`marked`, or `listed` by the last status for a
   * table ensured before markers existed), `forgotten` by the operator, or `none` — durable evidence that a
   * missing table was deleted rather than never created.
   */
  wasEnsured(kind: TableKind, destination: string): Promise<TableEvidence> {
    return tableEvidence(this.markers, kind, destination);
  }

  /** Records that the table exists (written only after it was ensured; replaces a `forgotten` marker). */
  markEnsured(kind: TableKind, destination: string): Promise<void> {
    return markTable(this.markers, kind, destination);
  }

  /**
   * Forgets that the table existed (`POST /tables/forget`): a missing one is then created empty by the next
   * ensure. Answers the evidence there was before.
   */
  forgetEnsured(kind: TableKind, destination: string, at: string): Promise<TableEvidence> {
    return forgetTable(this.markers, kind, destination, at);
  }

  /** Reads the status object as JSON, or undefined before the first tick. */
  async readStatus(): Promise<unknown> {
    const obj = await this.call('read status', () => this.store.read(this.paths.status));
    return obj ? (JSON.parse(obj.data.toString('utf8')) as unknown) : undefined;
  }

  /**
   * Writes the status object, carrying the previous one's lag series forward with this tick's sample. Compare-
   * and-swap like every write; a concurrent tick that wrote first wins and this one's (equivalent) status is
   * dropped.
   */
  async writeStatus(status: PipelineStatus): Promise<boolean> {
    const name = this.paths.status;
    const current = await this.call(`read ${name}`, () => this.store.read(name));
    const previous = current ? parseOrUndefined(current.data.toString('utf8')) : undefined;
    const next = withLagSample(previous, status);
    const outcome = await this.call(`write ${name}`, () =>
      this.store.write(name, Buffer.from(JSON.stringify(next, bigintReplacer, 2)), {
        ifGeneration: current?.generation ?? 0,
        contentType: JSON_TYPE,
      }),
    );
    return outcome.ok;
  }
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function bigintReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
