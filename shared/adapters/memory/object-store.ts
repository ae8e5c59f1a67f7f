/** In-memory object store with the same compare-and-swap semantics as Cloud Storage, for unit tests. */
import {
  type ObjectInfo,
  type ObjectPage,
  type ObjectStore,
  type StoredObject,
  WRITER_TOKEN_KEY,
  type WriteOptions,
  type WriteOutcome,
} from '../../ports/object-store';

/** In-memory {@link ObjectStore}. Generations are unique and increasing, like the emulator's. */
export class MemoryObjectStore implements ObjectStore {
  private readonly objects = new Map<string, StoredObject>();
  private nextGeneration = 1_000_000n;
  /** Counts of calls by operation, for tests and benchmarks. */
  readonly calls = { read: 0, write: 0, delete: 0, list: 0 };
  /** Errors the next writes of matching names throw before storing anything (Cloud Storage answers 503). */
  private readonly writeFaults: { matches: (name: string) => boolean; error: unknown }[] = [];

  /**
   * The next write of a name `matches` accepts fails with `error` and stores nothing: Cloud Storage can answer
   * 503 to any request (gcp-platform.md, retry guidance), and the caller must not take the write as done.
   */
  failNextWrite(matches: (name: string) => boolean, error: unknown): void {
    this.writeFaults.push({ matches, error });
  }

  async read(name: string): Promise<StoredObject | undefined> {
    this.calls.read++;
    const o = this.objects.get(name);
    return o && { ...o, data: Buffer.from(o.data), metadata: { ...o.metadata } };
  }

  async write(name: string, data: Buffer, options: WriteOptions): Promise<WriteOutcome> {
    this.calls.write++;
    const fault = this.writeFaults.findIndex((f) => f.matches(name));
    if (fault >= 0) throw this.writeFaults.splice(fault, 1)[0]!.error;
    const current = this.objects.get(name);
    const expected = options.ifGeneration === 0 ? undefined : options.ifGeneration;
    if (current?.generation !== expected) return { ok: false, reason: 'conflict' };
    const generation = String(this.nextGeneration++);
    this.objects.set(name, {
      name,
      generation,
      metadata: {
        ...(options.metadata ?? {}),
        ...(options.writerToken ? { [WRITER_TOKEN_KEY]: options.writerToken } : {}),
      },
      updated: new Date().toISOString(),
      ...(options.customTime ? { customTime: options.customTime } : {}),
      data: Buffer.from(data),
    });
    return { ok: true, generation };
  }

  async delete(name: string, ifGeneration: string): Promise<WriteOutcome> {
    this.calls.delete++;
    const current = this.objects.get(name);
    if (current?.generation !== ifGeneration) return { ok: false, reason: 'conflict' };
    this.objects.delete(name);
    return { ok: true, generation: ifGeneration };
  }

  async list(prefix: string, options: { pageToken?: string; maxResults?: number } = {}): Promise<ObjectPage> {
    this.calls.list++;
    const max = Math.min(options.maxResults ?? 1000, 1000);
    const names = [...this.objects.keys()]
      .filter((n) => n.startsWith(prefix) && (!options.pageToken || n >= options.pageToken))
      .sort();
    const page = names.slice(0, max);
    const items: ObjectInfo[] = page.map((n) => {
      const { data: _data, ...info } = this.objects.get(n)!;
      return { ...info, metadata: { ...info.metadata } };
    });
    return { items, nextPageToken: names[max] };
  }
}
