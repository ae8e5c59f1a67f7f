/**
 * Lineage emulator state on disk (`--data-dir`). Every accepted `ProcessOpenLineageRunEvent` call is appended
 * to the journal before it is answered; at start the calls are replayed through the same validation and
 * bookkeeping, so processes, runs, lineage events, their names and the request-id answers come back as they
 * were, then the whole history is written as the snapshot and the journal starts empty.
 */
import { Journal } from '../common/journal';
import type { AcceptedCall, LineageState } from './state';

/** Keeps one emulator's state in `dir`. */
export class LineagePersistence {
  private readonly journal: Journal<AcceptedCall[], AcceptedCall>;

  constructor(
    dir: string,
    private readonly state: LineageState,
  ) {
    this.journal = new Journal(dir);
  }

  /** Replays the saved calls into the emulator, then journals every new one. */
  load(): void {
    const { snapshot, events } = this.journal.load();
    const calls = [...(snapshot ?? []), ...events];
    for (const [i, call] of calls.entries()) {
      try {
        this.state.process(call.parent, call.struct, call.requestId);
      } catch (err) {
        throw new Error(
          `${this.journal.dir}: saved call ${i + 1} cannot be replayed: ${(err as Error).message}`,
        );
      }
    }
    this.journal.compact(calls);
    this.state.onAccepted = (call) => this.journal.append(call);
  }

  /** Flushes and closes the journal. */
  close(): void {
    this.state.onAccepted = undefined;
    this.journal.close();
  }
}
