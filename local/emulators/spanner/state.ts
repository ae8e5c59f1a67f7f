/**
 * Everything one emulator holds: instances, databases, sessions, partitions, and the options tests set.
 */
import { randomBytes } from 'node:crypto';
import { FaultInjector } from '../common/faults';
import { BatchWriteLog } from './batch-write';
import { Clock } from './clock';
import { type DatabaseEvent, EmulatedDatabase, type WriteLimits } from './database';
import { type ChangeStreamHooks, Code, SpannerError } from './hooks';
import { MAX_MUTATIONS_PER_COMMIT } from './messages';
import type { ReadView } from './storage';
import type { Dialect } from './tokenizer';

/** Options of one emulator. */
export interface EmulatorOptions {
  /** Builds the change-stream engine of each new database. */
  changeStreams?: (db: { name: string; dialect: Dialect }) => ChangeStreamHooks;
  /**
   * A fixed number of partitions for PartitionQuery / PartitionRead (capped by the request's maximum). Unset:
   * one partition per `partitionBytes` of the table's data at the snapshot, at least one, at most one per row.
   */
  partitions?: number;
  /** Mutations per commit and per BatchWrite request (default the service's 80,000). */
  mutationsPerCommit?: number;
  /** Data per partition when the request gives no `partition_size_bytes` (default 4 MiB). */
  partitionBytes?: number;
}

/** A change to the emulator's state, as persistence journals it. */
export type StateEvent =
  | { k: 'instance'; inst: InstanceState }
  | { k: 'instanceDeleted'; name: string }
  | { k: 'database'; name: string; dialect: Dialect; createNs: bigint }
  | { k: 'databaseDropped'; name: string }
  | { k: 'session'; s: SessionState }
  | { k: 'sessionDeleted'; name: string }
  | { k: 'churn'; db: string; atNs: bigint; stream?: string }
  | (DatabaseEvent & { db: string });

/** A session. */
export interface SessionState {
  name: string;
  database: string;
  multiplexed: boolean;
  createNs: bigint;
  labels: Record<string, string>;
}

/** A partition handed out by PartitionQuery / PartitionRead. */
export interface PartitionState {
  database: string;
  txnId: string;
  /** The SQL or `table:<name>` it belongs to. */
  subject: string;
  view: ReadView;
}

/** An instance. */
export interface InstanceState {
  name: string;
  config: string;
  displayName: string;
  nodeCount: number;
  processingUnits: number;
  createNs: bigint;
}

/** Shared state of one emulator. */
export class EmulatorState {
  readonly clock = new Clock();
  readonly faults = new FaultInjector();
  readonly instances = new Map<string, InstanceState>();
  readonly databases = new Map<string, EmulatedDatabase>();
  readonly sessions = new Map<string, SessionState>();
  readonly partitions = new Map<string, PartitionState>();
  /** Every BatchWrite request (bounded), for tests that count commits per group. */
  readonly batchWrites = new BatchWriteLog();
  /** Write limits of every database (one object: changing it applies at once). */
  readonly limits: WriteLimits;

  /** Told of every change that must survive a restart (persistence); databases get their own sink. */
  journal?: (event: StateEvent) => void;

  constructor(readonly options: EmulatorOptions) {
    this.limits = { mutationsPerCommit: options.mutationsPerCommit ?? MAX_MUTATIONS_PER_COMMIT };
  }

  private attach(db: EmulatedDatabase): void {
    const sink = this.journal;
    db.journal = sink ? (e) => sink({ ...e, db: db.name }) : undefined;
  }

  /** Starts journaling (after a replay): every database reports its DDL and commits too. */
  startJournal(sink: (event: StateEvent) => void): void {
    this.journal = sink;
    for (const db of this.databases.values()) this.attach(db);
  }

  /** Deletes an instance and its databases. */
  deleteInstance(name: string): void {
    for (const d of [...this.databases.keys()]) if (d.startsWith(`${name}/`)) this.dropDatabase(d);
    this.instances.delete(name);
    this.journal?.({ k: 'instanceDeleted', name });
  }

  /** Deletes a session (no error when it is gone). */
  deleteSession(name: string): void {
    if (this.sessions.delete(name)) this.journal?.({ k: 'sessionDeleted', name });
  }

  /** Creates an instance (ALREADY_EXISTS when it exists). */
  createInstance(name: string, config = '', displayName = '', nodeCount = 1): InstanceState {
    if (this.instances.has(name))
      throw new SpannerError(Code.ALREADY_EXISTS, `Instance already exists: ${name}`);
    const inst = {
      name,
      config,
      displayName: displayName || name.split('/').pop() || name,
      nodeCount,
      processingUnits: nodeCount * 1000,
      createNs: this.clock.nowNs(),
    };
    this.instances.set(name, inst);
    this.journal?.({ k: 'instance', inst });
    return inst;
  }

  /** Creates a database in an existing instance (`createNs` when a journal is replayed). */
  createDatabase(name: string, dialect: Dialect, createNs?: bigint): EmulatedDatabase {
    const instance = name.split('/databases/')[0] ?? '';
    if (!this.instances.has(instance))
      throw new SpannerError(Code.NOT_FOUND, `Instance not found: ${instance}`);
    if (this.databases.has(name))
      throw new SpannerError(Code.ALREADY_EXISTS, `Database already exists: ${name}`);
    const hooks = this.options.changeStreams?.({ name, dialect });
    const db = new EmulatedDatabase(name, dialect, this.clock, hooks, this.limits, createNs);
    this.databases.set(name, db);
    this.attach(db);
    this.journal?.({ k: 'database', name, dialect, createNs: db.createNs });
    return db;
  }

  /** The database, or NOT_FOUND. */
  database(name: string): EmulatedDatabase {
    const db = this.databases.get(name);
    if (!db) throw new SpannerError(Code.NOT_FOUND, `Database not found: ${name}`);
    return db;
  }

  /** Creates a session on a database. */
  createSession(database: string, multiplexed: boolean, labels: Record<string, string> = {}): SessionState {
    this.database(database);
    const name = `${database}/sessions/${randomBytes(12).toString('hex')}`;
    const s = { name, database, multiplexed, createNs: this.clock.nowNs(), labels };
    this.sessions.set(name, s);
    this.journal?.({ k: 'session', s });
    return s;
  }

  /** The session's database, or NOT_FOUND "Session not found" as the service answers. */
  sessionDb(name: string): EmulatedDatabase {
    const s = this.sessions.get(name);
    if (!s) throw new SpannerError(Code.NOT_FOUND, `Session not found: ${name}`);
    return this.database(s.database);
  }

  /** Drops a database and its sessions. */
  dropDatabase(name: string): void {
    this.databases.delete(name);
    for (const [k, s] of this.sessions) if (s.database === name) this.sessions.delete(k);
    this.journal?.({ k: 'databaseDropped', name });
  }
}
