/**
 * Cloud Tasks state on disk (`--data-dir`): queues, live tasks and reserved task names, written as one
 * snapshot (atomically: temp file, fsync, rename) at the end of the event-loop turn in which they changed,
 * and at stop. The state is small (tasks are at most 100 KB and leave the queue once dispatched).
 */
import { Journal } from '../common/journal';
import type { TasksState } from './state';

type Dump = ReturnType<TasksState['dump']>;

/** Keeps one emulator's state in `dir`. */
export class TasksPersistence {
  private readonly journal: Journal<Dump, never>;
  private pending = false;

  constructor(
    dir: string,
    private readonly state: TasksState,
  ) {
    this.journal = new Journal(dir);
  }

  /** Restores the saved state (if any) into the emulator. */
  load(): void {
    const { snapshot } = this.journal.load();
    if (snapshot) this.state.restore(snapshot);
    this.state.onChange = () => this.schedule();
  }

  private schedule(): void {
    if (this.pending) return;
    this.pending = true;
    setImmediate(() => this.flush());
  }

  /** Writes the current state now. */
  flush(): void {
    this.pending = false;
    this.journal.compact(this.state.dump());
  }

  /** Writes the final state and closes the files. */
  close(): void {
    this.state.onChange = undefined;
    this.flush();
    this.journal.close();
  }
}
