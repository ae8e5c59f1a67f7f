/**
 * Which source tables are replicated, and where to: `SLUICE_TABLES` as explicit entries (source table →
 * replica and/or history table), exclusions (`"Table": false`) and the all-tables form `"*"`, which applies a
 * naming rule to every table the change stream watches — also to tables created later.
 *
 * Naming rule: `{table}` in a template stands for the source table's name in lower case, the `.` of a named
 * schema's `sch.T` written `__` (`sch__t`), and any other character a BigQuery table name cannot hold replaced
 * by `_`. `true` takes the default template: `{table}` for replicas, `{table}_history` for history. Two
 * source tables the rules send to one replica table are refused, naming both (ADR-1405).
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

/** A source table: `T`, or `sch.T` for a table of a named schema. */
const TABLE_NAME = /^(?:[A-Za-z_][A-Za-z0-9_]{0,127}\.)?[A-Za-z_][A-Za-z0-9_]{0,127}$/;
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
      if (!TABLE_NAME.test(name))
        issue('table name must be an identifier, or schema.table for a table in a named schema');
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

/** The `{table}` part of a destination name: lower case, `[a-z0-9_]` only; `sch.T` is `sch__t`. */
export function destinationPart(table: string): string {
  return table
    .toLowerCase()
    .split('.')
    .map((part) => part.replace(/[^a-z0-9_]/g, '_'))
    .join('__');
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

/** One replica (or rule-named history) table that two or more source tables would write. */
interface Clash {
  kind: 'replica' | 'history';
  destination: string;
  sources: string[];
}

function clashes(rules: TableRules, tables: readonly string[]): Clash[] {
  const found = new Map<string, Clash>();
  const add = (kind: Clash['kind'], destination: string, table: string) => {
    const key = `${kind}:${destination}`;
    const clash = found.get(key) ?? { kind, destination, sources: [] };
    clash.sources.push(table);
    found.set(key, clash);
  };
  for (const table of new Set([...tables, ...Object.keys(rules.tables)])) {
    const targets = targetsFor(rules, table);
    if (targets?.replica) add('replica', targets.replica, table);
    // Explicit entries may share a history table on purpose; the rule's names may not meet by accident.
    if (targets?.history && !rules.tables[table]) add('history', targets.history, table);
  }
  return [...found.values()]
    .filter((c) => c.sources.length > 1)
    .map((c) => ({ ...c, sources: c.sources.sort() }));
}

function clashMessage(c: Clash): string {
  return `tables ${c.sources.join(' and ')} would both write the ${c.kind} table ${c.destination}: give one of them an explicit entry with another name in SLUICE_TABLES, or exclude it ("${c.sources[0]}": false)`;
}

/**
 * Source tables among `tables` (the watched ones; explicit entries are added) that the rules send to one
 * replica table — e.g. `sales.Orders` and a plain `sales__orders`, or two names differing only in case — one
 * problem per clash, naming the tables and the fix. A replica holds one row per key of one table: mixing two
 * would lose rows silently. Several tables share a history table only through explicit entries.
 */
export function destinationClashes(rules: TableRules, tables: readonly string[]): string[] {
  return clashes(rules, tables).map(clashMessage);
}

/** The clashes {@link destinationClashes} finds that involve `table`. */
export function destinationClashesOf(rules: TableRules, table: string, tables: readonly string[]): string[] {
  return clashes(rules, [...tables, table])
    .filter((c) => c.sources.includes(table))
    .map(clashMessage);
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
