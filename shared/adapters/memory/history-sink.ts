/**
 * In-memory {@link HistorySink} with the Storage Write API's stream semantics, for tests: committed streams
 * whose rows are visible once appended, pending streams visible once committed, offsets checked per request
 * (`ALREADY_EXISTS` for an offset already written, `OUT_OF_RANGE` beyond the end), finalize with the row
 * count, streams that expire, the CreateWriteStream quota, and faults that strike before a request is applied
 * or after it (the acknowledgement lost: the rows are in, the caller sees an error).
 */
import type { BigQueryField } from '../../domain/bigquery-schema';
import { HISTORY_TABLE_FIELDS, type HistoryRow } from '../../domain/history-rows';
import { historyTableMissing } from '../../domain/missing-table';
import { splitBySize } from '../../domain/request-split';
import { fromNanos, type Timestamp } from '../../domain/timestamp';
import type { EnsureOptions, HistorySink, HistoryStream, OffsetAppendResult } from '../../ports/sinks';

interface MemoryStream {
  name: string;
  table: string;
  type: 'committed' | 'pending';
  rows: HistoryRow[];
  finalized: boolean;
  committed: boolean;
  createdAt: Timestamp;
  schema: string;
}

/** A planned append failure: after `afterRequests` more acknowledged requests, fail the next one. */
interface AppendFault {
  error: unknown;
  afterRequests: number;
  /** The failing request's rows are written before the error is raised (an acknowledgement lost). */
  applied: boolean;
}

/** Options of {@link MemoryHistorySink}. */
export interface MemoryHistoryOptions {
  /** Clock for stream creation times. */
  now?: () => Timestamp;
  /** Rows per AppendRows request (a call is split like the BigQuery sink splits by size). */
  rowsPerRequest?: number;
  /** Streams that may be created in all (the CreateWriteStream quota); unlimited by default. */
  createQuota?: number;
}

const RESOURCE_EXHAUSTED = 8;
const INVALID_ARGUMENT = 3;

/**
 * BigQuery's AppendRows request limit: 20 MB (bigquery-storage-write.md §1.5 and §2.5, the quotas page and
 * the RPC reference); a larger request is refused with INVALID_ARGUMENT and "…request too large…" (§3.5, §4.3),
 * as production showed: `AppendRows request too large: 29482320 limit 20971520`. Measured here on the rows'
 * JSON, the shape the history rows are built in.
 */
export const APPEND_REQUEST_LIMIT_BYTES = 20 * 1024 * 1024;

function rowBytes(row: HistoryRow): number {
  return Buffer.byteLength(JSON.stringify(row), 'utf8');
}

interface MemoryHistoryTable {
  schema: string;
  visible: HistoryRow[];
  /** Enriched columns added by ensureTable, in order. */
  enriched?: BigQueryField[];
}

/** What every view of one in-memory BigQuery shares (see {@link MemoryHistorySink.withRequests}). */
class State {
  readonly tables = new Map<string, MemoryHistoryTable>();
  readonly streams = new Map<string, MemoryStream>();
  readonly appendFaults: AppendFault[] = [];
  readonly createFaults: unknown[] = [];
  readonly created: string[] = [];
  requests = 0;
  /** Requests answered ALREADY_EXISTS (their offset was written before). */
  alreadyExists = 0;
}

/** In-memory {@link HistorySink}; the raw table is {@link rawRows}. */
export class MemoryHistorySink implements HistorySink {
  private readonly tables: State['tables'];
  private readonly streams: State['streams'];
  private readonly appendFaults: AppendFault[];
  private readonly createFaults: unknown[];
  private readonly now: () => Timestamp;
  /** Streams created, in order (for tests and quota arithmetic). */
  readonly created: string[];

  constructor(
    private readonly options: MemoryHistoryOptions = {},
    private readonly state = new State(),
  ) {
    this.tables = state.tables;
    this.streams = state.streams;
    this.appendFaults = state.appendFaults;
    this.createFaults = state.createFaults;
    this.created = state.created;
    let tick = 1_700_000_000_000_000_000n;
    this.now =
      options.now ??
      (() => {
        tick += 1_000_000n;
        return fromNanos(tick);
      });
  }

  async ensureTable(
    destination: string,
    enriched: readonly BigQueryField[] = [],
    options: EnsureOptions = {},
  ): Promise<void> {
    if (!this.tables.has(destination)) {
      if (options.existed && !options.fresh) throw historyTableMissing(`memory.${destination}`);
      this.tables.set(destination, { schema: 'v1', visible: [] });
    }
    const table = this.table(destination);
    const have = table.enriched ?? [];
    const added = enriched.filter((f) => !have.some((h) => h.name.toLowerCase() === f.name.toLowerCase()));
    if (added.length === 0) return;
    // BigQuery's fingerprint changes with the schema: streams of the older one are replaced.
    table.enriched = [...have, ...added];
    table.schema = `v1+${table.enriched.map((f) => `${f.name}:${f.type}`).join(',')}`;
  }

  /** Deletes a table, as an operator deleting it in BigQuery would (for tests). */
  dropTable(destination: string): void {
    this.tables.delete(destination);
  }

  /** Whether the table exists (for tests). */
  hasTable(destination: string): boolean {
    return this.tables.has(destination);
  }

  /** The enriched columns the table has (for tests). */
  enrichedFields(destination: string): BigQueryField[] {
    return [...(this.tables.get(destination)?.enriched ?? [])];
  }

  async tableSchema(destination: string): Promise<string> {
    return this.table(destination).schema;
  }

  async createStream(destination: string, type: 'committed' | 'pending'): Promise<HistoryStream> {
    const table = this.table(destination);
    if (this.createFaults.length > 0) throw this.createFaults.shift();
    if (this.options.createQuota !== undefined && this.created.length >= this.options.createQuota) {
      throw Object.assign(new Error("Exceeds quota limit 'CreateWriteStream requests'"), {
        code: RESOURCE_EXHAUSTED,
      });
    }
    const name = `projects/memory/datasets/memory/tables/${destination}/streams/s${this.created.length + 1}`;
    const stream: MemoryStream = {
      name,
      table: destination,
      type,
      rows: [],
      finalized: false,
      committed: type === 'committed',
      createdAt: this.now(),
      schema: table.schema,
    };
    this.streams.set(name, stream);
    this.created.push(name);
    return { name, createdAt: stream.createdAt, schema: stream.schema };
  }

  /**
   * A call's rows in AppendRows requests, split as the BigQuery sink splits them (`splitBySize`): in order, at
   * most `rowsPerRequest` rows and {@link APPEND_REQUEST_LIMIT_BYTES} each; a single row over the limit goes
   * alone, and is refused as BigQuery refuses it.
   */
  private requestsOf(rows: HistoryRow[]): Array<{ rows: HistoryRow[]; bytes: number }> {
    const size = Math.max(1, this.options.rowsPerRequest ?? Number.POSITIVE_INFINITY);
    // Each row is measured once: the split and the request's size both come from these figures.
    const sized = rows.map((row) => ({ row, bytes: rowBytes(row) }));
    return splitBySize(sized, (r) => r.bytes, APPEND_REQUEST_LIMIT_BYTES, size).map((request) => ({
      rows: request.map((r) => r.row),
      bytes: request.reduce((n, r) => n + r.bytes, 0),
    }));
  }

  async appendAt(
    destination: string,
    stream: string,
    offset: number,
    rows: HistoryRow[],
  ): Promise<OffsetAppendResult> {
    this.checkColumns(destination, rows);
    let at = offset;
    for (const { rows: request, bytes } of this.requestsOf(rows)) {
      const fault = this.takeFault();
      if (fault && !fault.applied) throw fault.error;
      if (bytes > APPEND_REQUEST_LIMIT_BYTES) {
        this.state.requests++;
        throw Object.assign(
          new Error(`AppendRows request too large: ${bytes} limit ${APPEND_REQUEST_LIMIT_BYTES}`),
          { code: INVALID_ARGUMENT },
        );
      }
      const answer = this.appendRequest(destination, stream, at, request);
      if (fault) throw fault.error;
      if (answer.kind !== 'appended') return answer;
      at += request.length;
    }
    return { kind: 'appended' };
  }

  async finalizeStream(_destination: string, stream: string): Promise<number | null> {
    const s = this.streams.get(stream);
    if (!s) return null;
    s.finalized = true;
    return s.rows.length;
  }

  async commitStream(destination: string, stream: string): Promise<'committed' | 'gone'> {
    const s = this.streams.get(stream);
    if (!s) return 'gone';
    if (s.table !== destination)
      throw new Error(`stream ${stream} belongs to ${s.table}, not ${destination}`);
    if (s.committed) return 'committed';
    if (!s.finalized) throw new Error(`stream ${stream} is not finalized`);
    s.committed = true;
    this.table(destination).visible.push(...s.rows);
    return 'committed';
  }

  releaseStreams(_streams: string[]): void {}

  /**
   * BigQuery forgets every stream (a stream is garbage-collected some time after it was committed or expired,
   * bigquery-storage-write.md §2.3/§2.4): later calls naming one find nothing; committed rows stay visible.
   */
  forgetStreams(): void {
    this.streams.clear();
  }

  /** The next append request fails with `error` — after `afterRequests` good ones; `applied`: rows go in first. */
  failNextAppend(error: unknown, opts: { afterRequests?: number; applied?: boolean } = {}): void {
    this.appendFaults.push({ error, afterRequests: opts.afterRequests ?? 0, applied: opts.applied ?? false });
  }

  /** Planned append failures not struck yet (a test can tell a planned fault from one that happened). */
  get pendingAppendFaults(): number {
    return this.appendFaults.length;
  }

  /** The next CreateWriteStream fails with `error`. */
  failNextCreate(error: unknown): void {
    this.createFaults.push(error);
  }

  /** AppendRows requests answered ALREADY_EXISTS (by every view). */
  get alreadyExistsAnswers(): number {
    return this.state.alreadyExists;
  }

  /** AppendRows requests sent (by every view). */
  get requests(): number {
    return this.state.requests;
  }

  /** A view of the same tables and streams that splits appends into requests of `rows` rows. */
  withRequests(rows: number): MemoryHistorySink {
    return new MemoryHistorySink({ ...this.options, rowsPerRequest: rows, now: this.now }, this.state);
  }

  /** Forgets a stream as BigQuery does three days after its last append (its rows stay in the table). */
  expire(stream: string): void {
    this.streams.delete(stream);
  }

  /** Changes the table's schema fingerprint (a column was added). */
  alterSchema(destination: string, schema: string): void {
    this.table(destination).schema = schema;
  }

  /** Every row of the raw table, in the order it became visible. */
  rawRows(destination: string): HistoryRow[] {
    return [...(this.tables.get(destination)?.visible ?? [])];
  }

  /** A stream's state, or undefined when BigQuery would not know it. */
  stream(name: string): Readonly<MemoryStream> | undefined {
    return this.streams.get(name);
  }

  /** Like BigQuery, a row value for a column the table lacks is refused, never dropped. */
  private checkColumns(destination: string, rows: HistoryRow[]): void {
    const table = this.table(destination);
    const known = new Set([...HISTORY_TABLE_FIELDS, ...(table.enriched ?? [])].map((f) => f.name));
    for (const row of rows)
      for (const name of Object.keys(row))
        if (!known.has(name))
          throw Object.assign(new Error(`history table ${destination} has no column ${name}`), { code: 3 });
  }

  private table(destination: string): MemoryHistoryTable {
    const t = this.tables.get(destination);
    if (!t) throw Object.assign(new Error(`table ${destination} not found`), { code: 5 });
    return t;
  }

  private takeFault(): AppendFault | undefined {
    const next = this.appendFaults[0];
    if (!next) return undefined;
    if (next.afterRequests > 0) {
      next.afterRequests--;
      return undefined;
    }
    return this.appendFaults.shift();
  }

  private appendRequest(destination: string, name: string, offset: number, rows: HistoryRow[]) {
    this.state.requests++;
    const s = this.streams.get(name);
    if (!s) return unusable('gone', `stream ${name} not found`);
    if (s.table !== destination) throw new Error(`stream ${name} belongs to ${s.table}, not ${destination}`);
    if (s.finalized) return unusable('finalized', `stream ${name} is finalized`);
    if (offset < s.rows.length) {
      this.state.alreadyExists++;
      return { kind: 'already-exists' as const, offset };
    }
    if (offset > s.rows.length) return { kind: 'out-of-range' as const, offset };
    const copies = rows.map((r) => ({ ...r }));
    s.rows.push(...copies);
    if (s.type === 'committed') this.table(destination).visible.push(...copies);
    return { kind: 'appended' as const };
  }
}

function unusable(reason: 'finalized' | 'gone', message: string): OffsetAppendResult {
  return { kind: 'unusable', reason, message };
}
