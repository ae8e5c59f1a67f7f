/**
 * The operator's "forget this table" (`POST /tables/forget`, ADR-1517): a BigQuery table removed on purpose
 * and configured again is refused as deleted (ADR-1515, ADR-1516) until the pipeline forgets that it existed.
 * Forgetting marks its ledger marker `forgotten`; the next ensure then creates the table empty (and marks it
 * again), and the retried partitions write on. What was in the table before is not brought back — a backfill
 * does that — so this is for a table that is to start anew.
 */
import { SluiceError } from '../../domain/errors';
import type { Logger } from '../../domain/log';
import { nearest } from '../../domain/suggest';
import { type TableRules, targetsFor } from '../../domain/table-rules';
import type { SpannerCatalog } from '../../ports/spanner-catalog';
import type { LedgerStore } from '../ledger';
import type { TableEvidence, TableKind } from '../tables';

/** What a forget request asks: a source table, and which of its BigQuery tables (default: all it has). */
export interface ForgetRequest {
  table: string;
  targets?: TableKind[];
}

/** What it did, per BigQuery table: the evidence there was before (`none`: nothing was known of it). */
export interface ForgetOutcome {
  table: string;
  forgotten: Array<{ target: TableKind; destination: string; before: TableEvidence }>;
}

/** The table named cannot be forgotten as asked (answered 400, naming it). */
export class ForgetRefused extends SluiceError {
  override readonly name = 'ForgetRefused';
  constructor(message: string) {
    super('invalid-input', message);
  }
}

/** Whether Spanner has the table; an outage is thrown, not taken for an answer. */
async function inSpanner(catalog: Pick<SpannerCatalog, 'tableSchema'>, table: string): Promise<boolean> {
  try {
    await catalog.tableSchema(table);
    return true;
  } catch (err) {
    if (/not found|no columns/i.test((err as Error).message ?? '')) return false;
    throw err;
  }
}

/** The BigQuery tables of `request.table` that are to be forgotten. @throws ForgetRefused naming the problem. */
async function destinations(
  rules: TableRules,
  catalog: Pick<SpannerCatalog, 'tableSchema'>,
  request: ForgetRequest,
): Promise<Array<{ target: TableKind; destination: string }>> {
  const { table } = request;
  const targets = targetsFor(rules, table);
  const near = nearest(table, Object.keys(rules.tables));
  const hint = near ? ` (did you mean "${near}"?)` : '';
  if (!targets) throw new ForgetRefused(`table: "${table}" is not a table SLUICE_TABLES replicates${hint}`);
  // The all-tables rule names a destination for any name: a misspelt one must not pass for a table.
  if (!rules.tables[table] && !(await inSpanner(catalog, table)))
    throw new ForgetRefused(`table: "${table}" is not a table of the Spanner database${hint}`);
  const wanted = request.targets ?? (['replica', 'history'] as const).filter((t) => targets[t]);
  return wanted.map((target) => {
    const destination = targets[target];
    if (!destination)
      throw new ForgetRefused(`targets: table "${table}" has no ${target} table in SLUICE_TABLES`);
    return { target, destination };
  });
}

/**
 * Forgets that the BigQuery tables of a source table existed. @throws ForgetRefused when the table is not
 * replicated, is not in Spanner (all-tables rule) or lacks a target asked for.
 */
export async function forgetTables(
  ports: {
    ledger: LedgerStore;
    rules: TableRules;
    catalog: Pick<SpannerCatalog, 'tableSchema'>;
    log: Logger;
  },
  request: ForgetRequest,
  at: string,
): Promise<ForgetOutcome> {
  const outcome: ForgetOutcome = { table: request.table, forgotten: [] };
  for (const { target, destination } of await destinations(ports.rules, ports.catalog, request)) {
    const before = await ports.ledger.forgetEnsured(target, destination, at);
    outcome.forgotten.push({ target, destination, before });
    ports.log.notice('table.forgotten', { table: request.table, target, destination, before });
  }
  return outcome;
}
