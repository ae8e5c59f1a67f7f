/**
 * BigQuery on the local stack, as the end-to-end tests read it: a table of the local dataset by name, the
 * rows of a query, the key of a history row.
 */
import type { LocalStack } from '../../../local/stack';
import { LOCAL } from '../../../local/stack-config';

/** A row as the BigQuery client hands it back. */
export type Row = Record<string, unknown>;

/** A table of the local dataset, quoted for BigQuery SQL. */
export const bigQueryTable = (table: string): string => `\`${LOCAL.projectId}.${LOCAL.dataset}.${table}\``;

/** The rows a BigQuery query gives on the local stack. */
export async function bigQueryRows(stack: LocalStack, query: string): Promise<Row[]> {
  const [rows] = await stack.emulators.bigquery.bigquery().query({ query });
  return rows as Row[];
}

/** The primary key of a history row, parsed from its `keys` JSON. */
export function historyKeys(row: Row): Row {
  return JSON.parse(String((row.keys as { value?: string })?.value ?? row.keys)) as Row;
}
