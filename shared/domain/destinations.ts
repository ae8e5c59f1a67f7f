/**
 * Destination checks of the table map (ADR-1504): table maps that cannot work are refused before anything
 * runs, each problem named with its fix, instead of being accepted and failing every partition later.
 *
 * - A replica is keyed by its source's primary key: two sources writing one replica overwrite each other's
 *   rows, so a replica has exactly one source.
 * - A replica holds current rows with a primary key, a history one row per change partitioned by commit
 *   time: one BigQuery table cannot be both.
 * - Names starting with `_sluice_` are the pipeline's own tables (the completeness table).
 *
 * Several sources may share one history table (its rows carry `table_name`). Names are compared ignoring
 * case: a dataset may be case-insensitive, where `Orders` and `orders` are one table.
 */

/** The targets of one source table. */
export interface TableTargets {
  replica?: string | undefined;
  history?: string | undefined;
}

/** One problem: the configuration path it is at, and what is wrong and how to fix it. */
export interface DestinationProblem {
  path: string[];
  message: string;
}

/** Prefix of the pipeline's own BigQuery tables (`_sluice_completeness`, …). */
export const RESERVED_PREFIX = '_sluice_';

interface Use {
  source: string;
  role: 'replica' | 'history';
  name: string;
}

function uses(tables: Readonly<Record<string, TableTargets>>): Use[] {
  const out: Use[] = [];
  for (const [source, t] of Object.entries(tables)) {
    if (t.replica !== undefined) out.push({ source, role: 'replica', name: t.replica });
    if (t.history !== undefined) out.push({ source, role: 'history', name: t.history });
  }
  return out;
}

function clash(use: Use, other: Use): string | null {
  const same =
    use.name === other.name
      ? `"${use.name}"`
      : `"${use.name}" (the same table as "${other.name}" in a case-insensitive dataset)`;
  if (use.role === 'replica' && other.role === 'replica') {
    return `${same} is also the replica of ${other.source}: two source tables cannot share a replica (their rows would overwrite each other's); give each its own replica table`;
  }
  if (use.role !== other.role) {
    const owner = other.source === use.source ? 'this table' : other.source;
    return `${same} is also the ${other.role} table of ${owner}: a replica (current rows, keyed) and a history (one row per change) cannot be one BigQuery table; name them apart (e.g. "${use.name}_history")`;
  }
  return null;
}

/** Every problem of a table map's destinations; empty when it can work. */
export function destinationProblems(tables: Readonly<Record<string, TableTargets>>): DestinationProblem[] {
  const all = uses(tables);
  const problems: DestinationProblem[] = [];
  all.forEach((use, i) => {
    const path = [use.source, use.role];
    if (use.name.toLowerCase().startsWith(RESERVED_PREFIX)) {
      problems.push({
        path,
        message: `"${use.name}" is reserved: names starting with ${RESERVED_PREFIX} are the pipeline's own tables (completeness); choose another name`,
      });
    }
    // Each pair is reported once, at the later use, pointing at the earlier one.
    for (const other of all.slice(0, i)) {
      if (other.name.toLowerCase() !== use.name.toLowerCase()) continue;
      const message = clash(use, other);
      if (message) problems.push({ path, message });
    }
  });
  return problems;
}
