/**
 * Spanner state on disk (`--data-dir`): a journal of every change, replayed at start — instances,
 * databases, sessions, each DDL statement at its time, each commit's written rows at its commit timestamp,
 * and each change-stream churn at its time. Replaying the same history gives the same data, the same
 * change records and the same partition tokens (they derive from the history), so a reader's ledger stays
 * valid across a restart. Transactions open at the stop are gone, as after a service restart.
 */
import { Journal } from '../common/journal';
import type { ChangeStreamEngine } from './change-streams/engine';
import type { EmulatorState, StateEvent } from './state';

/** Keeps one emulator's state in `dir`. */
export class SpannerPersistence {
  private readonly journal: Journal<never, StateEvent>;

  constructor(
    dir: string,
    private readonly state: EmulatorState,
    private readonly engineOf: (database: string) => ChangeStreamEngine | undefined,
  ) {
    this.journal = new Journal(dir);
  }

  private apply(e: StateEvent): void {
    const s = this.state;
    switch (e.k) {
      case 'instance':
        s.instances.set(e.inst.name, e.inst);
        return;
      case 'instanceDeleted':
        s.deleteInstance(e.name);
        return;
      case 'database':
        s.createDatabase(e.name, e.dialect, e.createNs);
        return;
      case 'databaseDropped':
        s.dropDatabase(e.name);
        return;
      case 'session':
        s.sessions.set(e.s.name, e.s);
        return;
      case 'sessionDeleted':
        s.deleteSession(e.name);
        return;
      case 'churn':
        this.engineOf(e.db)?.replayChurn(e.atNs, e.stream);
        return;
      case 'ddl':
        s.database(e.db).updateDdl(
          [e.statement],
          [e.ns],
          e.descriptors ? Buffer.from(e.descriptors, 'base64') : undefined,
        );
        return;
      default:
        s.database(e.db).replayCommit(e.ts, e.tag, e.writes, e.excluded);
    }
  }

  /** Replays the journal into the (empty) emulator, then journals every later change. */
  load(): { events: number } {
    const { events } = this.journal.load();
    for (const e of events) this.apply(e);
    this.state.startJournal((e) => this.journal.append(e));
    return { events: events.length };
  }

  /** Records a churn of a database's change streams. */
  churned(database: string, atNs: bigint, stream?: string): void {
    this.state.journal?.({ k: 'churn', db: database, atNs, ...(stream ? { stream } : {}) });
  }

  /** Flushes and closes the journal. */
  close(): void {
    this.journal.close();
  }
}
