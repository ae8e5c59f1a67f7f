/** An object store wrapper that injects GCS-like faults: HTTP errors, lost write responses, hangs. */
import { MemoryObjectStore } from '../../../shared/adapters/memory/object-store';
import type {
  ObjectPage,
  ObjectStore,
  StoredObject,
  WriteOptions,
  WriteOutcome,
} from '../../../shared/ports/object-store';

export class FlakyStore implements ObjectStore {
  readonly inner = new MemoryObjectStore();
  /** HTTP statuses to throw on the next calls (any operation). */
  errors: number[] = [];
  /** The next write succeeds but answers "conflict", as when a retried request finds its own success. */
  loseNextWriteResponse = false;
  /** Writes to names containing this never complete (the process "dies" there). */
  hangWritesTo: string | null = null;
  /** Partition writes made while this holds never complete. */
  hangWritesWhen: (() => boolean) | null = null;

  private async gate(): Promise<void> {
    const status = this.errors.shift();
    if (status !== undefined) throw Object.assign(new Error(`HTTP ${status}`), { code: status });
  }
  async read(name: string): Promise<StoredObject | undefined> {
    await this.gate();
    return this.inner.read(name);
  }
  async write(name: string, data: Buffer, options: WriteOptions): Promise<WriteOutcome> {
    await this.gate();
    if (this.hangWritesTo !== null && name.includes(this.hangWritesTo))
      await new Promise<never>(() => undefined);
    if (this.hangWritesWhen?.() && name.includes('/partitions/')) await new Promise<never>(() => undefined);
    const out = await this.inner.write(name, data, options);
    if (out.ok && this.loseNextWriteResponse) {
      this.loseNextWriteResponse = false;
      return { ok: false, reason: 'conflict' };
    }
    return out;
  }
  async delete(name: string, generation: string): Promise<WriteOutcome> {
    await this.gate();
    return this.inner.delete(name, generation);
  }
  async list(prefix: string, options?: { pageToken?: string; maxResults?: number }): Promise<ObjectPage> {
    await this.gate();
    return this.inner.list(prefix, options);
  }
}
