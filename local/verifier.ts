/**
 * "BigQuery equals Spanner": every replica table row for row against a strong read of its source table,
 * every mod the workload committed present in the history table, and each exactly once: `COUNT(*)` equals
 * `COUNT(DISTINCT change_id)` in every raw history table, and — when the journal holds every change the
 * stream carried — equals the number of mods committed. Returns a diff rather than throwing, so the CLI
 * prints it and the end-to-end suite asserts on it.
 */
import type { Database } from '@google-cloud/spanner';
import { wireQuery } from '../shared/adapters/spanner/gapic-stream';
import { exactKeyColumn } from '../shared/domain/exact-keys';
import { canonicalJson, canonicalValue, exactTimestamp } from './canonical';
import type { DemoTable } from './demo-schema';
import type { CommittedMod } from './workload';

/** Rows of one BigQuery table as stored (the emulator's applied state), or an error when it is missing. */
export type BigQueryRows = (dataset: string, table: string) => Array<Record<string, unknown>>;

/** A replica row that differs from its source row. */
export interface RowDifference {
  key: string;
  column: string;
  spanner: string | null;
  bigquery: string | null;
}

/** The comparison of one replica table. At most `limit` examples of each kind are kept; counts are exact. */
export interface ReplicaReport {
  source: string;
  replica: string;
  spannerRows: number;
  bigqueryRows: number;
  missing: { count: number; keys: string[] };
  extra: { count: number; keys: string[] };
  different: { count: number; examples: RowDifference[] };
  error?: string;
}

/** The comparison of one history table with the mods the workload committed. */
export interface HistoryReport {
  source: string;
  history: string;
  expectedMods: number;
  /** `COUNT(*)` of the raw table, backfill snapshot rows included. */
  historyRows: number;
  /** `COUNT(DISTINCT change_id)` of the raw table. */
  distinctChangeIds: number;
  /** Rows written twice: `COUNT(*) − COUNT(DISTINCT change_id)`. */
  duplicates: number;
  /** Rows from the change stream (not backfill snapshot rows); must equal `expectedMods` when the journal is complete. */
  streamRows: number;
  /** Stream rows already there before this run (restored state); counted on top of `expectedMods`. */
  earlierRows: number;
  /** Rows the writer function applied to the source table during this run; counted on top of `expectedMods`. */
  writerMods: number;
  missing: { count: number; examples: string[] };
  error?: string;
}

/** The verdict: equal only when every report is clean. */
export interface VerifyResult {
  equal: boolean;
  replicas: ReplicaReport[];
  histories: HistoryReport[];
  /** Whether the stream rows were held to the journal (then `failedHistoryChecks` names that check too). */
  journalComplete?: boolean;
}

/** A SQL query through the official BigQuery client, its rows as the client returns them. */
export type BigQueryQuery = (sql: string) => Promise<Array<Record<string, unknown>>>;

/** What the verifier reads. */
export interface VerifyInput {
  database: Database;
  tables: DemoTable[];
  dataset: string;
  bigqueryRows: BigQueryRows;
  /** Counts history rows with SQL; without it they are counted from `bigqueryRows`. */
  bigqueryQuery?: BigQueryQuery;
  /** BigQuery project of the dataset (for the queries' table names). */
  project?: string;
  /** Mods committed by the workload; history tables are checked against them (none: not checked). */
  journal?: CommittedMod[];
  /**
   * The journal holds every change the stream carried (nothing was written by hand or before it starts):
   * the stream rows of each history table must then be exactly its mods, no more.
   */
  journalComplete?: boolean;
  /**
   * Stream rows each history table held before this run's journal began (state restored from `--data-dir`):
   * with a complete journal, the stream rows must equal these plus the run's mods.
   */
  earlierRows?: Record<string, number>;
  /**
   * Rows the writer function applied during this run, by source table (each applied mutation writes one row,
   * one mod of the stream): with a complete journal they are expected on top of the workload's mods.
   */
  writerMods?: Record<string, number>;
  /** Examples kept per kind of difference (default 10). */
  limit?: number;
}

type CanonicalRow = Map<string, string | null>;

/**
 * Rows by their exact key. A TIMESTAMP key compares at nanoseconds: Spanner's value itself, BigQuery's exact
 * companion column `K__ns` (BigQuery keeps microseconds in `K`; ADR-1402).
 */
function canonicalRows(
  table: DemoTable,
  rows: Array<Record<string, unknown>>,
  side: 'spanner' | 'bigquery',
): Map<string, CanonicalRow> {
  const kinds = new Map(table.columns.map((c) => [c.name, c.kind]));
  const keyText = (row: Record<string, unknown>, cells: CanonicalRow, k: string) => {
    if (kinds.get(k) !== 'timestamp') return cells.get(k);
    if (side === 'bigquery')
      return row[exactKeyColumn(k)] === undefined ? null : String(row[exactKeyColumn(k)]);
    return row[k] === null || row[k] === undefined ? null : exactTimestamp(row[k]);
  };
  const out = new Map<string, CanonicalRow>();
  for (const row of rows) {
    const cells: CanonicalRow = new Map(
      table.columns.map((c) => [c.name, canonicalValue(c.kind, row[c.name])]),
    );
    out.set(JSON.stringify(table.key.map((k) => keyText(row, cells, k))), cells);
  }
  return out;
}

/**
 * Every row of a table by a strong read in Spanner's wire form: the client's value objects would shift
 * pre-1970 fractional TIMESTAMPs by a second and round JSON numbers beyond 2^53, on this side of the
 * comparison only.
 */
async function spannerRows(database: Database, table: DemoTable): Promise<Array<Record<string, unknown>>> {
  const { fields, rows } = await wireQuery(database, { sql: `SELECT * FROM ${table.name}` });
  return rows.map((values) => Object.fromEntries(fields.map((f, i) => [f.name, values[i] ?? null])));
}

function compareRows(
  table: DemoTable,
  source: Map<string, CanonicalRow>,
  replica: Map<string, CanonicalRow>,
  report: ReplicaReport,
  limit: number,
): void {
  for (const [key, row] of source) {
    const other = replica.get(key);
    if (!other) {
      report.missing.count++;
      if (report.missing.keys.length < limit) report.missing.keys.push(key);
      continue;
    }
    for (const c of table.columns) {
      if (row.get(c.name) === other.get(c.name)) continue;
      report.different.count++;
      if (report.different.examples.length < limit) {
        report.different.examples.push({
          key,
          column: c.name,
          spanner: row.get(c.name) ?? null,
          bigquery: other.get(c.name) ?? null,
        });
      }
    }
  }
  for (const key of replica.keys()) {
    if (source.has(key)) continue;
    report.extra.count++;
    if (report.extra.keys.length < limit) report.extra.keys.push(key);
  }
}

async function verifyReplica(input: VerifyInput, table: DemoTable, replica: string): Promise<ReplicaReport> {
  const limit = input.limit ?? 10;
  const report: ReplicaReport = {
    source: table.name,
    replica,
    spannerRows: 0,
    bigqueryRows: 0,
    missing: { count: 0, keys: [] },
    extra: { count: 0, keys: [] },
    different: { count: 0, examples: [] },
  };
  const source = canonicalRows(table, await spannerRows(input.database, table), 'spanner');
  report.spannerRows = source.size;
  let target: Map<string, CanonicalRow>;
  try {
    target = canonicalRows(table, input.bigqueryRows(input.dataset, replica), 'bigquery');
  } catch (err) {
    report.error = `cannot read ${input.dataset}.${replica}: ${(err as Error).message}`;
    return report;
  }
  report.bigqueryRows = target.size;
  compareRows(table, source, target, report, limit);
  return report;
}

/** Identity of a mod for the comparison: table, keys, mod type and exact commit timestamp. */
export function modIdentity(
  table: string,
  keys: Record<string, unknown>,
  modType: string,
  commit: string,
): string {
  const k = Object.fromEntries(Object.entries(keys).map(([n, v]) => [n, v === null ? null : String(v)]));
  return `${table} ${modType} ${commit} ${canonicalJson(k)}`;
}

/** `COUNT(*)` and `COUNT(DISTINCT change_id)` of a history table, all rows and stream rows only. */
async function historyCounts(input: VerifyInput, history: string, rows: Array<Record<string, unknown>>) {
  const ids = (list: Array<Record<string, unknown>>) => new Set(list.map((r) => String(r.change_id))).size;
  if (!input.bigqueryQuery) {
    const stream = rows.filter((r) => r.mod_type !== 'SNAPSHOT');
    return { all: rows.length, distinct: ids(rows), stream: stream.length };
  }
  const table = `\`${input.project ? `${input.project}.` : ''}${input.dataset}.${history}\``;
  const count = async (where: string) =>
    (
      await input.bigqueryQuery!(
        `SELECT COUNT(*) AS n, COUNT(DISTINCT change_id) AS ids FROM ${table}${where}`,
      )
    )[0] ?? {};
  const all = await count('');
  const stream = await count(" WHERE mod_type != 'SNAPSHOT'");
  return { all: Number(all.n ?? 0), distinct: Number(all.ids ?? 0), stream: Number(stream.n ?? 0) };
}

async function verifyHistory(
  input: VerifyInput,
  table: DemoTable,
  history: string,
  journal: CommittedMod[],
): Promise<HistoryReport> {
  const limit = input.limit ?? 10;
  const expected = journal.filter((m) => m.table === table.name);
  const report: HistoryReport = {
    source: table.name,
    history,
    expectedMods: expected.length,
    historyRows: 0,
    distinctChangeIds: 0,
    duplicates: 0,
    streamRows: 0,
    earlierRows: input.earlierRows?.[history] ?? 0,
    writerMods: input.writerMods?.[table.name] ?? 0,
    missing: { count: 0, examples: [] },
  };
  const seen = new Set<string>();
  try {
    const rows = input.bigqueryRows(input.dataset, history);
    for (const r of rows) {
      const keys = JSON.parse(String(r.keys)) as Record<string, unknown>;
      seen.add(modIdentity(String(r.table_name), keys, String(r.mod_type), String(r.commit_timestamp_ns)));
    }
    const counts = await historyCounts(input, history, rows);
    report.historyRows = counts.all;
    report.distinctChangeIds = counts.distinct;
    report.duplicates = counts.all - counts.distinct;
    report.streamRows = counts.stream;
  } catch (err) {
    report.error = `cannot read ${input.dataset}.${history}: ${(err as Error).message}`;
  }
  for (const m of expected) {
    const id = modIdentity(m.table, m.keys, m.modType, m.commitTimestamp);
    if (seen.has(id)) continue;
    report.missing.count++;
    if (report.missing.examples.length < limit) report.missing.examples.push(id);
  }
  return report;
}

/** A history table is exact: nothing missing, nothing twice, and (complete journal) nothing else. */
function historyExact(h: HistoryReport, journalComplete: boolean): boolean {
  if (h.error || h.missing.count > 0 || h.duplicates !== 0) return false;
  return !journalComplete || h.streamRows === h.expectedMods + h.writerMods + h.earlierRows;
}

/** The checks a history table failed, each with its two numbers (empty when it is exact). */
export function failedHistoryChecks(h: HistoryReport, journalComplete: boolean): string[] {
  const failed: string[] = [];
  if (h.error) failed.push(`readable: ${h.error}`);
  if (h.missing.count > 0)
    failed.push(`every committed mod present: ${h.missing.count} of ${h.expectedMods} missing`);
  if (h.duplicates !== 0)
    failed.push(
      `each row once: COUNT(*) ${h.historyRows} ≠ COUNT(DISTINCT change_id) ${h.distinctChangeIds}`,
    );
  const expected = h.expectedMods + h.writerMods + h.earlierRows;
  if (journalComplete && !h.error && h.streamRows !== expected) {
    const parts = [
      `${h.expectedMods} mods`,
      ...(h.writerMods > 0 ? [`${h.writerMods} writer mods`] : []),
      ...(h.earlierRows > 0 ? [`${h.earlierRows} restored rows`] : []),
    ];
    const sum = parts.length > 1 ? ` (${parts.join(' + ')})` : ' mods';
    failed.push(`nothing else in history: stream rows ${h.streamRows} ≠ ${expected}${sum}`);
  }
  return failed;
}

/** One BatchWrite request as the Spanner emulator recorded it: each group's status and the rows it writes. */
export interface AppliedWrites {
  outcomes: Array<{ code: number; rows: string[] }>;
}

/**
 * Rows the writer function applied, by table: every group BatchWrite applied (status OK, whether or not its
 * answer reached the writer) writes its rows (`Table [key…]`), each one mod of the change stream; a group
 * that failed wrote nothing (groups are applied independently: spanner-writer.md, "The RPC").
 */
export function writerModsOf(requests: AppliedWrites[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of requests) {
    for (const o of r.outcomes) {
      if (o.code !== 0) continue;
      for (const row of o.rows) {
        const table = row.slice(0, row.indexOf(' ['));
        out[table] = (out[table] ?? 0) + 1;
      }
    }
  }
  return out;
}

/** Compares every configured BigQuery table with Spanner. */
export async function verify(input: VerifyInput): Promise<VerifyResult> {
  const replicas: ReplicaReport[] = [];
  const histories: HistoryReport[] = [];
  for (const t of input.tables) {
    if (t.replica) replicas.push(await verifyReplica(input, t, t.replica));
    if (t.history && input.journal) histories.push(await verifyHistory(input, t, t.history, input.journal));
  }
  const clean = (r: { error?: string; missing: { count: number } }) => !r.error && r.missing.count === 0;
  const equal =
    replicas.every((r) => clean(r) && r.extra.count === 0 && r.different.count === 0) &&
    histories.every((h) => historyExact(h, input.journalComplete ?? false));
  return { equal, replicas, histories, journalComplete: input.journalComplete ?? false };
}

/** A few lines a person can read: one per table, then the first differences. */
export function formatVerdict(result: VerifyResult): string {
  const lines = [
    result.equal ? 'verdict: BigQuery equals Spanner' : 'verdict: BigQuery DIFFERS from Spanner',
  ];
  for (const r of result.replicas) {
    lines.push(
      `  ${r.source} → ${r.replica}: ${r.spannerRows} rows in Spanner, ${r.bigqueryRows} in BigQuery; ` +
        `missing ${r.missing.count}, extra ${r.extra.count}, different cells ${r.different.count}` +
        (r.error ? `; ${r.error}` : ''),
    );
    for (const k of r.missing.keys.slice(0, 3)) lines.push(`    missing ${k}`);
    for (const k of r.extra.keys.slice(0, 3)) lines.push(`    extra ${k}`);
    for (const d of r.different.examples.slice(0, 3)) {
      lines.push(`    ${d.key}.${d.column}: Spanner ${d.spanner} ≠ BigQuery ${d.bigquery}`);
    }
  }
  for (const h of result.histories) {
    lines.push(
      `  ${h.source} → ${h.history}: ${h.expectedMods} mods committed` +
        (h.writerMods > 0 ? `, ${h.writerMods} through the writer` : '') +
        `; history COUNT(*) ${h.historyRows}, ` +
        `COUNT(DISTINCT change_id) ${h.distinctChangeIds}, stream rows ${h.streamRows}; ` +
        `missing ${h.missing.count}, written twice ${h.duplicates}` +
        (h.earlierRows > 0 ? `, ${h.earlierRows} stream rows restored from before this run` : '') +
        (h.error ? `; ${h.error}` : ''),
    );
    for (const check of failedHistoryChecks(h, result.journalComplete ?? false))
      lines.push(`    failed: ${check}`);
    for (const m of h.missing.examples.slice(0, 3)) lines.push(`    missing mod ${m}`);
  }
  return lines.join('\n');
}
