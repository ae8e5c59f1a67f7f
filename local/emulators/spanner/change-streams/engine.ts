/**
 * The change-stream engine of one emulated database: implements the core's `ChangeStreamHooks` and adds an
 * admin handle for tests (churn on demand, end a query after K rows with a code, inspect partitions).
 * This module only composes the parts, each in its own module: the stream registry, the commit log, query
 * routing, injected query faults, change wake-ups and the admin controls.
 */
import type { ChangeStreamHooks, SchemaView } from '../hooks';
import { type ChangeStreamAdmin, createAdmin, startChurnTimer } from './admin';
import { checkSchemaChange, renderDdl } from './catalog';
import { ChangeSignal } from './change-signal';
import { CommitLog } from './commit-log';
import { parseChangeStreamDdl } from './ddl-parse';
import { informationSchemaRows } from './information-schema';
import type { ChurnEvent } from './partitions';
import { QueryFaults } from './query-faults';
import { type RouteContext, routeChangeStreamQuery } from './query-route';
import { StreamRegistry } from './registry';
import { SchemaTracker } from './schema-tracker';
import { realClock } from './time';

export type { ChangeStreamAdmin, PartitionInfo } from './admin';

/** Options of {@link createChangeStreamEngine}. */
export interface ChangeStreamEngineOptions {
  /** Partitions each new stream starts with (default 2, like the official emulator). */
  initialPartitions?: number;
  /** Churn every stream's partitions on this interval in ms; 0 (default) = only on demand. */
  churnMs?: number;
  /** The core's clock (ns). Commit timestamps must come from it. Default: wall clock. */
  now?: () => bigint;
  /** Dialect for INFORMATION_SCHEMA and DDL text before the first schema is seen. */
  dialect?: SchemaView['dialect'];
  /** false accepts any retention_period (e.g. `5s`) so expiry can be tested; default true ([24h, 7d]). */
  retentionCheck?: boolean;
  /** Told of every churn that changed something (persistence journals it). */
  onChurn?: (atNs: bigint, stream?: string) => void;
}

/** The hooks plus the admin handle, and the replay of a journaled churn (persistence). */
export type ChangeStreamEngine = ChangeStreamHooks & {
  admin: ChangeStreamAdmin;
  replayChurn(atNs: bigint, stream?: string): void;
};

/** The state of one engine, shared by its hooks. */
interface EngineParts extends RouteContext {
  schemas: SchemaTracker;
  commits: CommitLog;
}

/** Creates the change-stream engine for one database. */
export function createChangeStreamEngine(options: ChangeStreamEngineOptions = {}): ChangeStreamEngine {
  const registry = new StreamRegistry(options.initialPartitions ?? 2, options.retentionCheck ?? true);
  const parts: EngineParts = {
    now: options.now ?? realClock(),
    registry,
    changes: new ChangeSignal(),
    faults: new QueryFaults(),
    schemas: new SchemaTracker(options.dialect ?? 'GOOGLE_STANDARD_SQL'),
    commits: new CommitLog(registry),
  };
  const churnAt = (atNs: bigint, only?: string): ChurnEvent[] => {
    const events = registry.churn(atNs, only);
    parts.changes.notify();
    return events;
  };
  const churn = (only?: string): ChurnEvent[] => {
    const atNs = parts.commits.churnAt(parts.now());
    const events = churnAt(atNs, only);
    if (events.length) options.onChurn?.(atNs, only);
    return events;
  };
  const timer = startChurnTimer(() => churn(), options.churnMs);
  return {
    ...hooksOf(parts),
    admin: createAdmin({ churn, faults: parts.faults, registry, timer }),
    replayChurn: (atNs, only) => void churnAt(atNs, only),
  };
}

/** The core's hooks over the engine's parts; every hook first records the schema it was shown. */
function hooksOf(parts: EngineParts): ChangeStreamHooks {
  const { registry, schemas, changes } = parts;
  return {
    applyDdl: (statement, schema, nowNs) => {
      schemas.seen(schema);
      const command = parseChangeStreamDdl(statement);
      if (!command) return false;
      registry.apply(command, schema, nowNs);
      changes.notify();
      return true;
    },
    checkSchemaChange: (change, schema) => {
      schemas.seen(schema);
      checkSchemaChange(registry.definitions(), change, schema);
    },
    onCommit: (event) => {
      schemas.seen(event.schema);
      parts.commits.record(event);
      changes.notify();
    },
    routeQuery: (request) => {
      schemas.seen(request.schema);
      return routeChangeStreamQuery(request, parts);
    },
    informationSchema: (view) =>
      informationSchemaRows(view, registry.definitions(), schemas.dialect, schemas.last),
    ddlStatements: () => registry.definitions().map((s) => renderDdl(s, schemas.dialect)),
  };
}
