/**
 * The source tables one function instance replicates, and their plans, following the schema while it
 * changes (ADR-1301). A table is planned on first sight — from INFORMATION_SCHEMA as of the first record's
 * commit timestamp — and its BigQuery tables are created or gain columns before any of its rows is written.
 * After that, the plan changes only when a record (or a read at a commit timestamp) shows drift: then the
 * schema is read again as of that record's timestamp, type changes are decided by policy, and the BigQuery
 * tables gain the new columns (reconnecting the writer) before the first row that has them.
 */
import type { PipelineConfig } from '../../domain/config';
import type { ResolvedLookup } from '../../domain/enrichment/lookups';
import { SluiceError } from '../../domain/errors';
import type { ChangeStreamScope, TableColumn, TableSchema } from '../../domain/information-schema';
import type { Logger } from '../../domain/log';
import { findMissingTable } from '../../domain/missing-table';
import { columnDrift, type Drift, planReplica, type ReplicaPlan } from '../../domain/replica-plan';
import {
  destinationClashesOf,
  notReplicatedReason,
  type TableTargets,
  targetsFor,
} from '../../domain/table-rules';
import { formatTimestamp, type Timestamp } from '../../domain/timestamp';
import { decideSpannerTypeChange, incompatibleTypeError } from '../../domain/type-changes';
import type { HistorySink, ReplicaSink } from '../../ports/sinks';
import type { SpannerCatalog } from '../../ports/spanner-catalog';
import { resolveTableLookups, withEnrichedColumns } from './lookup-resolution';
import { type EnsuredMarkers, MarkedTables } from './table-markers';

/** The ports the registry uses. */
export interface RegistryPorts {
  catalog: SpannerCatalog;
  replica: ReplicaSink;
  history: HistorySink;
  /**
   * Where it tells a deleted table from a new one. Without it a missing table is always created (only an
   * instance that met it missing on a write refuses it).
   */
  ledger?: EnsuredMarkers | undefined;
}

/** One source table as this instance replicates it. */
export interface ReplicatedTable {
  source: string;
  targets: TableTargets;
  plan: ReplicaPlan;
  /** The table's lookups, resolved against the schemas when it was planned (empty: no enrichment). */
  lookups: ResolvedLookup[];
}

/** The watched columns of a table under a stream scope; undefined when the stream does not watch it. */
export function watchedColumns(scope: ChangeStreamScope, table: string): 'all' | string[] | undefined {
  const explicit = scope.tables.get(table);
  if (explicit) return explicit.columns;
  return scope.all ? 'all' : undefined;
}

/** Adds the columns a record carries but a (fallback) schema lacks, typed as the record types them. */
function withRecordColumns(schema: TableSchema, drift: readonly Drift[]): TableSchema {
  const missing = drift.filter(
    (d): d is Extract<Drift, { kind: 'added' }> =>
      d.kind === 'added' && !schema.columns.some((c) => c.name === d.column),
  );
  if (missing.length === 0) return schema;
  let position = Math.max(0, ...schema.columns.map((c) => c.ordinalPosition));
  const added: TableColumn[] = missing.map((d) => ({
    name: d.column,
    type: d.type,
    nullable: true,
    ordinalPosition: ++position,
  }));
  return { ...schema, columns: [...schema.columns, ...added] };
}

/** Per instance: the replicated tables, planned once and re-planned on drift. */
export class TableRegistry {
  private readonly tables = new Map<string, Promise<ReplicatedTable | null>>();
  private scope: Promise<ChangeStreamScope> | undefined;
  private readonly skipped = new Set<string>();
  /** Plans already ensured by {@link adopt}, by table: an unchanged plan costs no BigQuery call. */
  private readonly signatures = new Map<string, string>();
  /** The ledger's evidence of each BigQuery table, read once per table by this instance. */
  private readonly marked: MarkedTables;

  constructor(
    private readonly ports: RegistryPorts,
    private readonly config: PipelineConfig,
    private readonly log: Logger,
  ) {
    this.marked = new MarkedTables(ports.ledger);
  }

  /**
   * The table as replicated, planned on first sight from its schema as of `at` (BigQuery tables ensured);
   * null when `SLUICE_TABLES` does not replicate it (logged once per instance).
   */
  table(source: string, at: Timestamp): Promise<ReplicatedTable | null> {
    let entry = this.tables.get(source);
    if (!entry) {
      entry = this.load(source, at);
      this.tables.set(source, entry);
      entry.catch(() => {
        if (this.tables.get(source) === entry) this.tables.delete(source);
      });
    }
    return entry;
  }

  /**
   * Re-plans `source` after drift seen at `at`: the schema as of `at` (and the stream's scope) is read
   * again, each type change decided by policy, and the BigQuery tables gain the new columns. A concurrent
   * refresh that already covers the drift is reused. @throws SluiceError (`permanent`) for an incompatible
   * type change, naming table, column, both types and the fix.
   */
  refresh(source: string, at: Timestamp, drift: readonly Drift[]): Promise<ReplicatedTable> {
    const previous = this.tables.get(source) ?? Promise.resolve(null);
    const next = previous
      .catch(() => null)
      .then(async (current) => {
        if (current && columnDrift(current.plan, driftColumns(drift)).length === 0) return current;
        return this.replan(source, at, drift, current);
      });
    this.tables.set(source, next);
    next.catch(() => {
      if (this.tables.get(source) === next) this.tables.delete(source);
    });
    return next;
  }

  /**
   * Plans a table from a schema read by the caller (the scheduler's tick reads every table at once) and
   * ensures its BigQuery tables when the plan changed; null when the table is not replicated.
   */
  async adopt(schema: TableSchema, watched: 'all' | string[]): Promise<ReplicatedTable | null> {
    const targets = targetsFor(this.config, schema.name);
    if (!targets) return null;
    const plan = planReplica(schema, watched);
    const signature = planSignature(plan);
    const current = await this.tables.get(schema.name)?.catch(() => null);
    if (current && this.signatures.get(schema.name) === signature) return current;
    const table = await this.ensure(schema.name, targets, plan);
    this.tables.set(schema.name, Promise.resolve(table));
    this.signatures.set(schema.name, signature);
    return table;
  }

  /** Forgets what was planned (the next sight of each table plans it again). */
  clear(): void {
    this.tables.clear();
    this.scope = undefined;
  }

  private async load(source: string, at: Timestamp): Promise<ReplicatedTable | null> {
    const targets = targetsFor(this.config, source);
    if (!targets) {
      if (!this.skipped.has(source)) {
        this.skipped.add(source);
        this.log.warn('table.not-replicated', {
          table: source,
          reason: notReplicatedReason(this.config, source),
        });
      }
      return null;
    }
    const [schema, watched] = await Promise.all([this.schemaAt(source, at), this.watched(source, false)]);
    await this.refuseClash(source);
    return this.ensure(source, targets, planReplica(schema, watched), at);
  }

  private async replan(
    source: string,
    at: Timestamp,
    drift: readonly Drift[],
    current: ReplicatedTable | null,
  ): Promise<ReplicatedTable> {
    const targets = current?.targets ?? targetsFor(this.config, source);
    if (!targets) throw new SluiceError('permanent', `table ${source} is not replicated but drifted`);
    const [schema, watched] = await Promise.all([
      this.schemaAt(source, at, true),
      this.watched(source, true),
    ]);
    const plan = planReplica(withRecordColumns(schema, drift), watched);
    for (const d of drift) if (d.kind === 'type-changed') this.checkTypeChange(source, targets, plan, d);
    const table = await this.ensure(source, targets, plan, at);
    this.log.notice('table.schema-changed', {
      table: source,
      at: formatTimestamp(at),
      added: drift.filter((d) => d.kind === 'added').map((d) => d.column),
      typeChanged: drift.filter((d) => d.kind === 'type-changed').map((d) => d.column),
      columns: plan.columns.size,
    });
    return table;
  }

  private checkTypeChange(
    source: string,
    targets: TableTargets,
    plan: ReplicaPlan,
    d: Extract<Drift, { kind: 'type-changed' }>,
  ): void {
    if (!targets.replica) return;
    const key = plan.schema.primaryKey.includes(d.column);
    const change = decideSpannerTypeChange(d.column, d.from, d.to, key);
    if (change.kind !== 'incompatible') return;
    throw incompatibleTypeError({
      source,
      destination: targets.replica,
      column: d.column,
      bigQueryType: change.have,
      spannerType: d.to,
      mapsTo: change.want,
      previousSpannerType: d.from,
    });
  }

  /**
   * Creates or evolves the table's BigQuery tables, with the enriched columns of its lookups — resolved again
   * at every (re)plan, so a fact or dimension column that changed is checked before a row is written.
   * @throws SluiceError (`permanent`) naming the table, the lookup and the field when a lookup cannot resolve.
   */
  private async ensure(
    source: string,
    targets: TableTargets,
    plan: ReplicaPlan,
    at?: Timestamp,
  ): Promise<ReplicatedTable> {
    const lookups = await resolveTableLookups(this.ports.catalog, plan.schema, targets.lookups ?? [], at);
    const enriched = withEnrichedColumns(plan, lookups);
    const { replica, history } = targets;
    if (replica)
      await this.marked.ensure('replica', replica, (existed) =>
        this.ports.replica.ensureTable(replica, enriched.schema, enriched.watched, { existed }),
      );
    if (history)
      await this.marked.ensure('history', history, (existed) =>
        this.ports.history.ensureTable(history, enriched.fields, { existed }),
      );
    return { source, targets, plan, lookups };
  }

  /**
   * After a write met a table missing (`MissingTableError`): forgets this instance's plans of the tables that
   * write to it and that the table was marked, so the next window plans them again and ensures the table
   * with the ledger's evidence read afresh — refused again while it was deleted, created if the operator
   * forgot it. Other errors change nothing.
   */
  forgetMissing(err: unknown): void {
    const missing = findMissingTable(err);
    if (!missing) return;
    this.marked.forget(missing.target, missing.destination);
    for (const source of [...this.tables.keys()]) {
      const targets = targetsFor(this.config, source);
      if (targets?.[missing.target] !== missing.destination) continue;
      this.tables.delete(source);
      this.signatures.delete(source);
    }
  }

  private async schemaAt(source: string, at: Timestamp, fresh = false): Promise<TableSchema> {
    try {
      return await this.ports.catalog.tableSchema(source, { at, fresh });
    } catch (err) {
      if (!/not found|no columns/i.test((err as Error).message ?? '')) throw err;
      throw new SluiceError(
        'permanent',
        `table ${source} has changes at ${formatTimestamp(at)} but no columns in INFORMATION_SCHEMA at that time`,
        { cause: err },
      );
    }
  }

  /**
   * Refuses a table whose BigQuery table another watched table would write too (e.g. `sales.Orders` and a
   * plain `sales__orders`), naming both: mixing two tables' rows in one replica would lose rows silently.
   */
  private async refuseClash(source: string): Promise<void> {
    const [schemas, scope] = await Promise.all([this.ports.catalog.tableSchemas(), this.scopeNow(false)]);
    const watched = schemas.map((s) => s.name).filter((n) => watchedColumns(scope, n) !== undefined);
    const clashes = destinationClashesOf(this.config, source, watched);
    if (clashes.length > 0) throw new SluiceError('permanent', clashes.join('; '));
  }

  private async watched(source: string, fresh: boolean): Promise<'all' | string[]> {
    // A table the stream no longer lists (SET FOR changed) still has records up to then: its columns stay.
    return watchedColumns(await this.scopeNow(fresh), source) ?? 'all';
  }

  private scopeNow(fresh: boolean): Promise<ChangeStreamScope> {
    if (fresh || !this.scope) {
      const stream = this.config.spanner.stream;
      this.scope = this.ports.catalog.streamScope(stream).then((s) => {
        if (!s) throw new SluiceError('permanent', `change stream ${stream} does not exist`);
        return s;
      });
      this.scope.catch(() => {
        this.scope = undefined;
      });
    }
    return this.scope;
  }
}

/** What a plan asks of BigQuery: its columns and their types. */
function planSignature(plan: ReplicaPlan): string {
  return JSON.stringify([...plan.columns.values()].map((c) => [c.name, c.type, c.nullable]));
}

/** The columns a drift names, for checking whether a plan already covers it. */
function driftColumns(drift: readonly Drift[]) {
  return drift.map((d) => ({ name: d.column, type: d.kind === 'added' ? d.type : d.to }));
}
