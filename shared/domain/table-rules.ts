/**
 * Which source tables are replicated, and where to: `SLUICE_TABLES` as explicit entries (source table →
 * replica and/or history table), exclusions (`"Table": false`) and the all-tables form `"*"`, which applies a
 * naming rule to every table the change stream watches — also to tables created later.
 *
 * Naming rule: `{table}` in a template stands for the source table's name in lower case, with every character
 * a BigQuery table name cannot hold (anything but letters, digits and `_`, e.g. the `.` of a named schema)
 * replaced by `_`. `true` takes the default template: `{table}` for replicas, `{table}_history` for history.
 */
import { z } from 'zod';
import { type LookupConfig, lookupsSchema } from './enrichment/lookups';

/** The destinations of one source table. */
export interface TableTargets {
  replica?: string;
  history?: string;
  /** Enrichment by primary-key lookups of dimension tables (docs/enrichment.md); explicit entries only. */
  lookups?: LookupConfig[];
}

/** The all-tables rule: destination templates (each containing `{table}`). */
export interface AllTablesRule {
  replica?: string;
  history?: string;
}

/** The key of the all-tables rule in `SLUICE_TABLES`. */
export const ALL_TABLES = '*';

/** Default templates of `"*": {"replica": true, "history": true}`. */
export const DEFAULT_TEMPLATES = { replica: '{table}', history: '{table}_history' } as const;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const BIGQUERY_TABLE = /^[A-Za-z0-9_]{1,1024}$/;
const TEMPLATE = /^[A-Za-z0-9_]*\{table\}[A-Za-z0-9_]*$/;

const destination = z
  .string({ error: 'must be a BigQuery table name ([A-Za-z0-9_])' })
  .regex(BIGQUERY_TABLE, 'must be a BigQuery table name ([A-Za-z0-9_])');

/** One explicit entry: a replica table, a history table, or both. */
export const tableTargetsSchema = z
  .strictObject({
    replica: destination.optional(),
    history: destination.optional(),
    lookups: lookupsSchema.optional(),
  })
  .refine((t) => t.replica !== undefined || t.history !== undefined, {
    message: 'must name a replica table, a history table, or both',
  });

const TEMPLATE_RULE =
  'must be true (the default naming rule) or a BigQuery table name containing {table}, e.g. {table}_cdc';
const template = z.union(
  [z.literal(true, TEMPLATE_RULE), z.string(TEMPLATE_RULE).regex(TEMPLATE, TEMPLATE_RULE)],
  { error: TEMPLATE_RULE },
);

const allTablesSchema = z
  .strictObject({ replica: template.optional(), history: template.optional() })
  .refine((t) => t.replica !== undefined || t.history !== undefined, {
    message: 'must give a replica rule, a history rule, or both',
  });

/** The parsed `SLUICE_TABLES`. */
export interface TableRules {
  /** Explicit entries (they win over the all-tables rule). */
  tables: Record<string, TableTargets>;
  /** The all-tables rule, when `"*"` is configured. */
  allTables: AllTablesRule | null;
  /** Tables left out of the all-tables rule (`"Table": false`). */
  excludedTables: string[];
}

/** `SLUICE_TABLES`: a JSON object of source table → targets, `false`, and the `"*"` rule. */
export const tableRulesSchema = z
  .record(z.string(), z.unknown(), { error: 'must be a JSON object of table name to targets' })
  .transform((raw, ctx): TableRules => {
    const rules: TableRules = { tables: {}, allTables: null, excludedTables: [] };
    let failed = false;
    for (const [name, value] of Object.entries(raw)) {
      const issue = (message: string, path: PropertyKey[] = []) => {
        failed = true;
        ctx.issues.push({ code: 'custom', input: value, path: [name, ...path], message });
      };
      if (name === ALL_TABLES) {
        const parsed = allTablesSchema.safeParse(value);
        if (!parsed.success) for (const i of parsed.error.issues) issue(i.message, i.path);
        else rules.allTables = templates(parsed.data);
        continue;
      }
      if (!IDENTIFIER.test(name)) issue('table name must be an identifier');
      if (value === false) {
        rules.excludedTables.push(name);
        continue;
      }
      const parsed = tableTargetsSchema.safeParse(value);
      if (!parsed.success) for (const i of parsed.error.issues) issue(i.message, i.path);
      else rules.tables[name] = parsed.data;
    }
    if (!failed && Object.keys(rules.tables).length === 0 && rules.allTables === null)
      ctx.issues.push({ code: 'custom', input: raw, message: 'must watch at least one table' });
    return rules;
  });

function templates(t: { replica?: string | true; history?: string | true }): AllTablesRule {
  const out: AllTablesRule = {};
  if (t.replica !== undefined) out.replica = t.replica === true ? DEFAULT_TEMPLATES.replica : t.replica;
  if (t.history !== undefined) out.history = t.history === true ? DEFAULT_TEMPLATES.history : t.history;
  return out;
}

/** The `{table}` part of a destination name: lower case, `[a-z0-9_]` only. */
export function destinationPart(table: string): string {
  return table.toLowerCase().replace(/[^a-z0-9_]/g, '_');
}

/** A template applied to a source table. */
export function applyTemplate(template: string, table: string): string {
  return template.replace('{table}', destinationPart(table));
}

/** The targets of a source table under the rules; undefined when the table is not replicated. */
export function targetsFor(rules: TableRules, table: string): TableTargets | undefined {
  const explicit = rules.tables[table];
  if (explicit) return explicit;
  if (rules.allTables === null || rules.excludedTables.includes(table)) return undefined;
  const out: TableTargets = {};
  if (rules.allTables.replica) out.replica = applyTemplate(rules.allTables.replica, table);
  if (rules.allTables.history) out.history = applyTemplate(rules.allTables.history, table);
  return out;
}

/** True when some source table's name makes `template` give `destination`. */
function templateGives(template: string, destination: string): boolean {
  const [pre = '', post = ''] = template.split('{table}');
  if (!destination.startsWith(pre) || !destination.endsWith(post)) return false;
  const middle = destination.slice(pre.length, destination.length - post.length);
  return destination.length > pre.length + post.length && /^[a-z0-9_]+$/.test(middle);
}

/**
 * Which source tables the rules send to the history table `destination`, as a deterministic text: the
 * explicit entries naming it (sorted), then `*=<template>` when the all-tables rule can produce it, followed
 * by `-<table>` for each table the rule would send there but an explicit entry or an exclusion keeps away.
 * Equal texts mean the same set of source tables (also for tables created later); the history rows after a
 * position depend on this set (ADR-1605). Empty when nothing feeds `destination`.
 */
export function historySources(rules: TableRules, destination: string): string {
  const parts = Object.keys(rules.tables)
    .filter((t) => rules.tables[t]?.history === destination)
    .sort();
  const template = rules.allTables?.history;
  if (template && templateGives(template, destination)) {
    parts.push(`*=${template}`);
    const overridden = [...Object.keys(rules.tables), ...rules.excludedTables].filter(
      (t) => rules.tables[t]?.history !== destination && applyTemplate(template, t) === destination,
    );
    for (const t of [...new Set(overridden)].sort()) parts.push(`-${t}`);
  }
  return parts.join(',');
}

/** Why a table is not replicated (for the log line and the status), or undefined when it is. */
export function notReplicatedReason(rules: TableRules, table: string): string | undefined {
  if (targetsFor(rules, table)) return undefined;
  if (rules.excludedTables.includes(table)) return `excluded in SLUICE_TABLES ("${table}": false)`;
  return `not in SLUICE_TABLES (add it, or add "${ALL_TABLES}" to replicate every watched table)`;
}

/** The rules back in their JSON form (what `SLUICE_TABLES` holds). */
export function tableRulesJson(rules: TableRules): Record<string, TableTargets | AllTablesRule | false> {
  const out: Record<string, TableTargets | AllTablesRule | false> = { ...rules.tables };
  for (const name of rules.excludedTables) out[name] = false;
  if (rules.allTables) out[ALL_TABLES] = rules.allTables;
  return out;
}
