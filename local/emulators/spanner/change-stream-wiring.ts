/**
 * Wires one change-stream engine into every database of the emulator (unless told otherwise) and exposes
 * the engines' test controls through the admin handle and the admin HTTP endpoint.
 */
import type { AdminRoute } from '../common/admin-http';
import { type ChangeStreamEngine, createChangeStreamEngine } from './change-streams/engine';
import type { ChurnEvent } from './change-streams/partitions';
import type { QueryHold } from './change-streams/query-faults';
import type { ChangeStreamHooks } from './hooks';
import type { EmulatorOptions } from './state';
import type { Dialect } from './tokenizer';

/** Change-stream knobs of `startSpannerEmulator`. */
export interface ChangeStreamOptions {
  /**
   * Builds the hooks of each new database. Default: a change-stream engine on the emulator's commit clock;
   * `false` turns change streams off (their DDL then fails like any unknown statement).
   */
  changeStreams?: EmulatorOptions['changeStreams'] | false;
  /** Partitions each new change stream starts with (default 2). */
  initialPartitions?: number;
  /** Churn (split / move / merge) every stream's partitions on this interval in ms; 0 = only on demand. */
  churnMs?: number;
  /** false accepts any `retention_period` (e.g. `5s`) so expiry can be tested; default true. */
  retentionCheck?: boolean;
}

/** Default churn interval: the real service replaces partitions every few tens of seconds. */
export const DEFAULT_CHURN_MS = 30_000;

/** Test controls of the change-stream engines, part of the admin handle. */
export interface ChangeStreamControls {
  /** Churns the partitions of every stream now (or of one database / stream); returns what happened. */
  churnNow(opts?: { database?: string; stream?: string }): ChurnEvent[];
  /** The next change-stream query (of every database, or of `database`) ends after `k` records with `code`. */
  endChangeStreamQueryAfter(k: number, code: number, opts?: { database?: string; message?: string }): void;
  /**
   * The next partition query (of every database, or of `database`; of `partition`, when given) that sends its
   * child-partitions record stays open right after it until `releaseChangeStreamQuery(id)`: a reader stalled
   * after it read the record. Returns the hold's id.
   */
  holdChangeStreamQueryAfterEnd(opts?: { database?: string; partition?: string }): number;
  /** Lets the query held by hold `id` end (or disarms it); false when no engine has that hold. */
  releaseChangeStreamQuery(id: number): boolean;
  /** Every hold of every engine: which partition it held (`held`), whether it was released. */
  changeStreamHolds(): QueryHold[];
  /** The engine of one database, when the default engine is in use. */
  changeStreamEngine(database: string): ChangeStreamEngine | undefined;
}

/** The engines of one emulator. */
export interface ChangeStreamWiring {
  factory: EmulatorOptions['changeStreams'];
  controls: ChangeStreamControls;
  routes: Record<string, AdminRoute>;
  close(): void;
}

/** Creates the per-database factory and the controls over the engines it creates. */
export function wireChangeStreams(
  options: ChangeStreamOptions,
  nowNs: () => bigint,
  onChurn?: (database: string, atNs: bigint, stream?: string) => void,
): ChangeStreamWiring {
  const engines = new Map<string, ChangeStreamEngine>();
  const selected = (database?: string) =>
    [...engines.entries()].filter(([name]) => database === undefined || name === database).map(([, e]) => e);
  const defaultFactory = (db: { name: string; dialect: Dialect }): ChangeStreamHooks => {
    engines.get(db.name)?.admin.close();
    const engine = createChangeStreamEngine({
      now: nowNs,
      dialect: db.dialect,
      initialPartitions: options.initialPartitions ?? 2,
      churnMs: options.churnMs ?? DEFAULT_CHURN_MS,
      retentionCheck: options.retentionCheck,
      onChurn: (atNs, stream) => onChurn?.(db.name, atNs, stream),
    });
    engines.set(db.name, engine);
    return engine;
  };
  const factory = options.changeStreams === false ? undefined : (options.changeStreams ?? defaultFactory);
  let holds = 0;
  const controls: ChangeStreamControls = {
    churnNow: (opts = {}) => selected(opts.database).flatMap((e) => e.admin.churnNow(opts.stream)),
    endChangeStreamQueryAfter: (k, code, opts = {}) => {
      for (const e of selected(opts.database)) e.admin.endQueryAfter(k, code, opts.message);
    },
    holdChangeStreamQueryAfterEnd: (opts = {}) => {
      const id = ++holds;
      for (const e of selected(opts.database)) e.admin.holdQueryAfterEnd(id, opts.partition);
      return id;
    },
    releaseChangeStreamQuery: (id) =>
      [...engines.values()].map((e) => e.admin.releaseQuery(id)).some((released) => released),
    changeStreamHolds: () => [...engines.values()].flatMap((e) => e.admin.queryHolds()),
    changeStreamEngine: (database) => engines.get(database),
  };
  const routes: Record<string, AdminRoute> = {
    'POST /change-streams/churn': (body) => {
      const b = (body ?? {}) as { database?: string; stream?: string };
      return controls.churnNow(b).map((e) => JSON.parse(JSON.stringify(e, bigintText)) as unknown);
    },
    'POST /change-streams/end-query': (body) => {
      const b = body as { k: number; code: number; database?: string; message?: string };
      controls.endChangeStreamQueryAfter(Number(b.k), Number(b.code), b);
      return {};
    },
    'POST /change-streams/hold-after-end': (body) => {
      const b = (body ?? {}) as { database?: string; partition?: string };
      return { id: controls.holdChangeStreamQueryAfterEnd(b) };
    },
    'POST /change-streams/release': (body) => {
      const b = (body ?? {}) as { id?: number };
      return { released: controls.releaseChangeStreamQuery(Number(b.id)) };
    },
    'GET /change-streams/holds': () => controls.changeStreamHolds(),
  };
  return {
    factory,
    controls,
    routes,
    close: () => {
      for (const e of engines.values()) e.admin.close();
    },
  };
}

function bigintText(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
