/**
 * An instance killed at an `await`: the handler's promise never settles, its memory is gone, and Cloud Tasks,
 * having no answer, delivers the task again after the dispatch deadline (gcp-platform.md §2.1: "any other
 * status, or no response, means retry"). The next delivery runs on a new, cold instance (the harness builds a
 * fresh reader per delivery). The kill points are the calls to GCS (before a call, or after a write was
 * applied) and the records of the change stream.
 */
import type {
  ObjectPage,
  ObjectStore,
  StoredObject,
  WriteOptions,
  WriteOutcome,
} from '../../shared/ports/object-store';

/** Counts the kill points of one delivery and stops it for good at the armed one. */
export class Killer {
  private at = -1;
  private calls = 0;
  private fire: () => void = () => undefined;
  /** Settles when the armed delivery was killed. */
  killed: Promise<void> = Promise.resolve();

  /** Kills the delivery at its `point`-th kill point from now. */
  arm(point: number): void {
    this.at = point;
    this.calls = 0;
    this.killed = new Promise((resolve) => {
      this.fire = resolve;
    });
  }

  disarm(): void {
    this.at = -1;
  }

  /** One kill point: returns at once, or never (the instance died here). */
  async point(): Promise<void> {
    if (this.at < 0 || this.calls++ !== this.at) return;
    this.at = -1;
    this.fire();
    await new Promise<never>(() => undefined);
  }
}

/** An object store whose calls are kill points (before each call, and after a write was applied). */
export class KillableStore implements ObjectStore {
  constructor(
    private readonly inner: ObjectStore,
    private readonly killer: Killer,
    /** Called on each 412 (a write or delete whose precondition failed: a race, or a lost answer's retry). */
    private readonly onConflict: () => void = () => undefined,
  ) {}
  private seen(out: WriteOutcome): WriteOutcome {
    if (!out.ok) this.onConflict();
    return out;
  }
  async read(name: string): Promise<StoredObject | undefined> {
    await this.killer.point();
    return this.inner.read(name);
  }
  async write(name: string, data: Buffer, options: WriteOptions): Promise<WriteOutcome> {
    await this.killer.point();
    const out = this.seen(await this.inner.write(name, data, options));
    await this.killer.point();
    return out;
  }
  async delete(name: string, generation: string): Promise<WriteOutcome> {
    await this.killer.point();
    return this.seen(await this.inner.delete(name, generation));
  }
  async list(prefix: string, options?: { pageToken?: string; maxResults?: number }): Promise<ObjectPage> {
    await this.killer.point();
    return this.inner.list(prefix, options);
  }
}
